"""Build hook: with ``SIMSERVER_COMPILE=1`` the modules simserver/compiled.py lists are
compiled with mypyc (the release's wheels); otherwise the wheel is plain Python. Everything
else is in pyproject.toml."""

import os
import runpy
import sys

from setuptools import setup

if os.environ.get("SIMSERVER_COMPILE") == "1":
    from mypyc.build import mypycify

    spec = runpy.run_path(os.path.join("simserver", "compiled.py"))
    extensions = mypycify(list(spec["MODULES"]), opt_level="3")
    if sys.platform != "win32":  # MSVC does not contract unless asked (/fp:contract)
        for ext in extensions:
            ext.extra_compile_args = [*ext.extra_compile_args, *spec["COMPILE_ARGS"]]
    setup(ext_modules=extensions)
else:
    setup()
