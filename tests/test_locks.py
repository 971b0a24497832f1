"""tests/locks.FileLock: exclusive between processes, re-entrant within one, so a test that
leaked its lock cannot hang the rest of the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.ntutil import REPO


def test_a_second_lock_in_the_same_process_does_not_wait_for_the_first(tmp_path):
    code = textwrap.dedent("""
        import sys
        from pathlib import Path
        from tests.locks import FileLock
        path = Path(sys.argv[1])
        leaked = FileLock(path)
        leaked.acquire()  # never released, as by a test that failed first
        with FileLock(path):
            pass
        print("not blocked")
    """)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.lock")], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "not blocked", done.stderr


def test_another_process_waits_until_the_lock_is_released_by_every_holder(tmp_path):
    path = tmp_path / "x.lock"
    code = textwrap.dedent("""
        import sys
        from pathlib import Path
        from tests.locks import FileLock
        path = Path(sys.argv[1])
        a, b = FileLock(path), FileLock(path)
        a.acquire(); b.acquire()
        print("held", flush=True)
        sys.stdin.readline(); a.release()
        print("one released", flush=True)
        sys.stdin.readline(); b.release()
        print("both released", flush=True)
        sys.stdin.readline()
    """)
    holder = subprocess.Popen([sys.executable, "-c", code, str(path)], cwd=REPO, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        probe = [sys.executable, "-c", "import sys; from pathlib import Path; "
                 "from tests.locks import FileLock; FileLock(Path(sys.argv[1])).acquire()",
                 str(path)]
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "one released"
        waiting = subprocess.Popen(probe, cwd=REPO)
        try:
            waiting.wait(2)
            raise AssertionError("acquired while the other process still held the lock")
        except subprocess.TimeoutExpired:
            pass
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "both released"
        assert waiting.wait(30) == 0
    finally:
        holder.kill()
        holder.wait()
