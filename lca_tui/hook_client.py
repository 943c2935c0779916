"""What ``lca-tui hooks install`` writes into Claude Code's ``settings.json``:
``PYTHON -S …/lca_tui/hook_client.py hook EVENT --store PATH || exit 1``.

A file run as a script is compiled on every run (the client's 340 lines: 1.5 ms of each
prompt); a module is read from its cached bytecode. So this file only imports the client,
``lca_tui/hook_fast.py``, from its own folder (``sys.path[0]`` under ``-S``) and runs it. The
client and why it is written as it is: that file's docstring.
"""

import sys

if __name__ == "__main__":
    try:
        import hook_fast
    except ImportError:  # this folder left off the path (PYTHONSAFEPATH): put it first
        import os

        sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
        import hook_fast

    sys.exit(hook_fast.main())
