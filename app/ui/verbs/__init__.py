"""One module per verb of the command line. Each declares its arguments (`add(verbs)`: its
subparser, with `func` set to what runs it) and runs itself (`run(args) -> int`, the exit
code; `lab`'s actions have a function each, and `run.py` holds the TUI, what `ecoready`
does without a verb). The options several verbs share are declared once, in `options.py`.
A verb module imports only light modules at its top, the rest where it runs, so `--help`
stays fast (bench/startup.py)."""

from __future__ import annotations

from ecoready.ui.verbs import (
    check,
    cleanup,
    diff,
    doctor,
    drivers,
    images,
    init,
    lab,
    plan,
    report,
    run,
    validate,
    watch,
)

# in the order `ecoready --help` lists them
VERBS = (run, check, watch, report, diff, images, drivers, init, plan, validate, cleanup, doctor, lab)
