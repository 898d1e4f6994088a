"""What is said of a registry mirror's trouble, per cause (`mirror-gap`, `mirror-behind`,
`mirror-down`): a few words for verdict lines, the remedy (the views' per-cause tables
take theirs from here, `ecoready images` its notes), and how an answer that passed the
mirror by says why. The mirror is blamed, never the component nor its upstream, and each
remedy offers the way out that needs no mirror: `fallback`."""

from __future__ import annotations

from collections.abc import Mapping

from ecoready.domain.blame import Cause

FALLBACK = "or allow fallback to the upstream registry (`[registry] fallback = true`, ECOREADY_REGISTRY_FALLBACK=true)"

# cause -> a few words after `mirror M` (verdict lines, notes)
SHORT: Mapping[Cause, str] = {
    Cause.MIRROR_GAP: "lacks it",
    Cause.MIRROR_BEHIND: "is behind",
    Cause.MIRROR_DOWN: "could not be asked",
}
# cause -> the remedy; `{subject}` is the mirror
REMEDIES: Mapping[Cause, str] = {
    Cause.MIRROR_GAP: "the mirror {subject} lacks the image, not its publisher: copy the image into the mirror "
    "(or let the mirror proxy its upstream), " + FALLBACK,
    Cause.MIRROR_BEHIND: "the mirror {subject} holds an older or partial copy, without an arch its upstream "
    "publishes (not the component's fault): copy the image into the mirror again with every platform "
    "(`skopeo copy --all`, `regctl image copy`, `crane copy`), " + FALLBACK,
    Cause.MIRROR_DOWN: "the mirror {subject} could not be asked (neither the component's fault nor its "
    "upstream's): check its address, that it runs and answers, and its login in the docker config, " + FALLBACK,
}
# the mirror's trouble that had the upstream answer instead -> how the answer says it
PASSED_BY: Mapping[Cause, str] = {
    Cause.MIRROR_GAP: "it lacks the image",
    Cause.MIRROR_BEHIND: "its copy lacks the arch",
    Cause.MIRROR_DOWN: "it could not be asked",
}


def remedy(cause: Cause, mirror: str) -> str:
    return REMEDIES[cause].format(subject=mirror)


def via(mirror: str, fallback: Cause | None) -> str:
    """Where an image came from, when a mirror was asked: `through the mirror M`, or `from
    its upstream registry: the mirror M was passed by (it lacks the image)`; "" none."""
    if not mirror:
        return ""
    if fallback is None:
        return f"through the mirror {mirror}"
    return f"from its upstream registry: the mirror {mirror} was passed by ({PASSED_BY.get(fallback, fallback.value)})"
