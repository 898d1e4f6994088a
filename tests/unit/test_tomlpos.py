from ecoready.matrix.tomlpos import locate


def test_positions_of_keys_values_and_array_tables() -> None:
    text = (
        'title = "x" # comment\n'
        'arches = [\n  "amd64",\n  "arm64",\n]\n'
        '[[components]]\nid = "a"\n'
        '[[components]]\n"id" = """multi\nline"""\nopts = { a = 1, b = [1, 2] }\n'
        "[components.options]\nx.y = 3\n"
    )
    pos = locate(text)
    assert pos.keys[("title",)] == (1, 1)
    assert pos.values[("title",)] == (1, 9)
    assert pos.values[("arches", 1)] == (4, 3)
    assert pos.keys[("components", 0, "id")] == (7, 1)
    assert pos.keys[("components", 1)] == (8, 1)
    assert pos.keys[("components", 1, "id")] == (9, 1)
    assert pos.keys[("components", 1, "opts")] == (11, 1)
    assert pos.values[("components", 1, "opts", "b", 1)] == (11, 25)
    assert pos.keys[("components", 1, "options", "x")] == (13, 1)
    assert pos.keys[("components", 1, "options", "x", "y")] == (13, 3)


def test_unknown_paths_fall_back_to_the_nearest_parent() -> None:
    pos = locate('[[components]]\nid = "a"\n')
    assert pos.of_key(("components", 0, "image")) == (1, 1)
    assert pos.of_value(("nothing",)) == (1, 1)


def test_scanner_never_raises_on_garbage() -> None:
    for text in ["[", "a = ", '"', "x = [1, {", "[[a]]\n[[a.b", "a.'b\n", "\x00"]:
        locate(text)
