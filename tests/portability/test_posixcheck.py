"""simserver/ uses nothing POSIX-only outside a guard (tests/portability/posixcheck.py), and
the checker finds what it should: each bad snippet below is reported, each guarded or
portable one is not."""

from __future__ import annotations

import textwrap

import pytest

from tests.ntutil import REPO
from tests.portability.posixcheck import check_source, check_tree

#: (snippet, a word the finding names): each must be reported.
BAD = {
    "import-fcntl": ("import fcntl\n", "import fcntl"),
    "import-resource-in-function": ("def f():\n    import resource\n", "import resource"),
    "from-pwd": ("from pwd import getpwuid\n", "pwd"),
    "import-termios-as": ("import termios as t\n", "termios"),
    "from-os-import-fork": ("from os import fork\n", "fork"),
    "from-signal-import-sighup": ("from signal import SIGHUP\n", "SIGHUP"),
    "os-fork": ("import os\npid = os.fork()\n", "os.fork"),
    "os-killpg": ("import os, signal\nos.killpg(1, signal.SIGTERM)\n", "os.killpg"),
    "os-getuid-aliased": ("import os as _os\nuid = _os.getuid()\n", "os.getuid"),
    "os-setsid-in-method": ("import os\nclass A:\n    def f(self):\n        os.setsid()\n",
                            "os.setsid"),
    "os-wnohang": ("import os\nos.waitpid(1, os.WNOHANG)\n", "os.WNOHANG"),
    "os-kill-probe": ("import os\nos.kill(123, 0)\n", "os.kill"),
    "sigkill": ("import signal\nsig = signal.SIGKILL\n", "SIGKILL"),
    "sigstop-via-enum": ("import signal\nsig = signal.Signals.SIGSTOP\n", "SIGSTOP"),
    "sigusr1-handler": ("import signal\nsignal.signal(signal.SIGUSR1, print)\n", "SIGUSR1"),
    "sigchld-in-tuple": ("import signal\nfor s in (signal.SIGINT, signal.SIGCHLD):\n    pass\n",
                         "SIGCHLD"),
    "signal-alarm": ("import signal\nsignal.alarm(3)\n", "signal.alarm"),
    "getattr-without-default": ("import signal\ns = getattr(signal, 'SIGHUP')\n", "SIGHUP"),
    "select-on-pipe": ("import select\nselect.select([p.stdout], [], [], 1)\n",
                       "select.select"),
    "reuseaddr": ("import socket\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n",
                  "SO_REUSEADDR"),
    "af-unix": ("import socket\nsocket.socket(socket.AF_UNIX)\n", "AF_UNIX"),
    "libc-prctl": ("import ctypes\nlibc = ctypes.CDLL(None)\nlibc.prctl(1, 9)\n", "CDLL"),
    "preexec-fn": ("import subprocess\nsubprocess.run(['x'], preexec_fn=f)\n", "preexec_fn"),
    "pass-fds": ("from subprocess import Popen\nPopen(['x'], pass_fds=(3,))\n", "pass_fds"),
    "shell-true": ("import subprocess\nsubprocess.run('ls /', shell=True)\n", "shell=True"),
    "tmp-literal": ("LOCK = '/tmp/simserver.lock'\n", "/tmp"),
    "dev-literal": ("open('/dev/null')\n", "/dev/"),
    "proc-fstring": ("pid = 1\npath = f'/proc/{pid}/stat'\n", "/proc/"),
    "split-filename": ("where = frame.filename.rsplit('/', 1)[-1]\n", "rsplit"),
    "split-dunder-file": ("name = __file__.split('/')[-1]\n", "split"),
    # a guard for something else guards nothing here
    "try-oserror-is-no-guard": ("try:\n    import fcntl\nexcept OSError:\n    pass\n",
                                "import fcntl"),
    "if-unrelated-is-no-guard": ("import os\nif verbose:\n    os.fork()\n", "os.fork"),
    "after-a-non-exiting-guard": ("import os, sys\nif sys.platform == 'win32':\n    x = 1\n"
                                  "os.fork()\n", "os.fork"),
    "handler-of-a-guarded-try": ("try:\n    import fcntl\nexcept ImportError:\n"
                                 "    import msvcrt, termios\n", "import termios"),
}

#: Guarded or portable code: none may be reported.
GOOD = {
    "try-import": "try:\n    import fcntl\nexcept ImportError:\n    fcntl = None\n",
    "try-import-tuple": "try:\n    import resource\nexcept (ImportError, OSError):\n    pass\n",
    "platform-if": "import sys, os\nif sys.platform != 'win32':\n    os.killpg(1, 9)\n",
    "platform-else": "import os\nif os.name == 'nt':\n    pass\nelse:\n    os.setsid()\n",
    "elif-chain": ("import os, signal\nif x:\n    pass\nelif hasattr(os, 'killpg'):\n"
                   "    os.killpg(1, signal.SIGKILL)\n"),
    "hasattr": "import os\nif hasattr(os, 'fork'):\n    pid = os.fork()\n",
    "hasattr-and": "import os\nok = hasattr(os, 'getuid') and os.getuid() == 0\n",
    "ternary": "import signal\ns = signal.SIGKILL if hasattr(signal, 'SIGKILL') else None\n",
    "getattr-default": "import signal\ns = getattr(signal, 'SIGHUP', None)\n",
    "guard-name": ("import os\nGROUPS = hasattr(os, 'killpg')\ndef f():\n    if GROUPS:\n"
                   "        os.killpg(1, 15)\n"),
    "early-return": ("import os, signal\ndef f(pid):\n    if not hasattr(os, 'killpg'):\n"
                     "        return\n    os.killpg(pid, signal.SIGKILL)\n"),
    "module-refuses-to-import": ("import os, select\nif not hasattr(os, 'fork'):\n"
                                 "    raise ImportError('needs fork')\npid = os.fork()\n"
                                 "select.select([0], [], [], 1)\n"),
    "linux-branch-literal": ("import os, sys\nif sys.platform.startswith('linux'):\n"
                             "    n = len(os.listdir('/proc/self/task'))\n"),
    "suppress-attributeerror": ("import contextlib, os\nwith contextlib.suppress(AttributeError):"
                                "\n    os.setsid()\n"),
    "portable-calls": ("import os, signal, subprocess, tempfile\n"
                       "signal.signal(signal.SIGINT, print)\nsignal.signal(signal.SIGTERM, print)\n"
                       "d = tempfile.gettempdir()\nos.replace('a', 'b')\n"
                       "p = subprocess.Popen(['x'])\np.terminate()\np.kill()\nos.getpid()\n"
                       "os.devnull\n"),
    "docstring-mentions": '"""Refuses /dev/zero and FIFOs."""\ndef f():\n    """/tmp too."""\n',
    "topic-paths": "name = topic.name.rsplit('/', 1)[1]\nkey = '/'.join(parts)\n",
    "message-mentions": "msg = 'a FIFO or /dev/zero would block'\n",
}


@pytest.mark.parametrize("name", list(BAD))
def test_the_checker_reports_each_unguarded_posix_only_use(name):
    source, word = BAD[name]
    found = check_source(source)
    assert found, f"not reported:\n{source}"
    assert any(word in f.what for f in found), [str(f) for f in found]


@pytest.mark.parametrize("name", list(GOOD))
def test_the_checker_accepts_guarded_and_portable_code(name):
    found = check_source(textwrap.dedent(GOOD[name]))
    assert not found, [str(f) for f in found]


def test_a_finding_names_the_file_line_and_why():
    found = check_source("import os\n\n\nos.killpg(1, 9)\n", "simserver/x.py")
    assert [str(f) for f in found] == [
        "simserver/x.py:4: os.killpg: POSIX-only: Windows' os has no such name"]


def test_simserver_uses_nothing_posix_only_outside_a_guard():
    """Every module of simserver/ (the commands, the bridge inside `robotpy sim`, sweeps,
    ports, locks): students run them on Windows."""
    found = check_tree(REPO / "simserver")
    assert not found, "POSIX-only uses outside a guard:\n" + "\n".join(map(str, found))
