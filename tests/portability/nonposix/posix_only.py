"""What the Python standard library has on Linux and macOS but not on Windows: the names the
portability checker looks for in simserver/ and the ones the non-POSIX interpreter
(``sitecustomize`` beside this file) takes away. One list for both, so the checker and the
interpreter cannot disagree.

From the CPython docs' "Availability: Unix" (3.10-3.13) and the Windows builds' ``nt`` and
``signal`` modules. Names that exist on Windows but behave differently (``os.kill``,
``select.select``, ``socket.SO_REUSEADDR``) are the checker's business, not listed here.
"""

from __future__ import annotations

#: Modules Windows' Python does not have.
MODULES = frozenset({
    "fcntl", "resource", "termios", "pwd", "grp", "pty", "tty", "posix", "syslog", "crypt",
    "spwd", "nis", "ossaudiodev", "readline", "curses", "_curses",
})

#: The only signal names Windows has (everything else SIG... is POSIX-only).
WINDOWS_SIGNALS = frozenset({
    "SIGABRT", "SIGFPE", "SIGILL", "SIGINT", "SIGSEGV", "SIGTERM", "SIGBREAK", "SIG_DFL",
    "SIG_IGN",
})

#: Signal names and ``signal`` functions of Linux and macOS that Windows lacks.
SIGNAL_NAMES = frozenset({
    "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGEMT", "SIGHUP", "SIGINFO",
    "SIGIO", "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR", "SIGQUIT",
    "SIGRTMAX", "SIGRTMIN", "SIGSTKFLT", "SIGSTOP", "SIGSYS", "SIGTRAP", "SIGTSTP", "SIGTTIN",
    "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGWINCH", "SIGXCPU", "SIGXFSZ",
    "SIG_BLOCK", "SIG_SETMASK", "SIG_UNBLOCK", "ITIMER_PROF", "ITIMER_REAL", "ITIMER_VIRTUAL",
    "alarm", "getitimer", "pause", "pidfd_send_signal", "pthread_kill", "pthread_sigmask",
    "setitimer", "siginterrupt", "sigpending", "sigtimedwait", "sigwait", "sigwaitinfo",
})

#: ``os`` functions and constants of Linux and macOS that Windows lacks.
OS_NAMES = frozenset({
    # processes, sessions and groups
    "fork", "forkpty", "register_at_fork", "setsid", "getsid", "setpgid", "setpgrp", "getpgid",
    "getpgrp", "killpg", "wait", "wait3", "wait4", "waitid", "WNOHANG", "WUNTRACED",
    "WCONTINUED", "WCOREDUMP", "WIFCONTINUED", "WIFSTOPPED", "WIFSIGNALED", "WIFEXITED",
    "WEXITSTATUS", "WTERMSIG", "WSTOPSIG", "posix_spawn", "posix_spawnp", "pidfd_open",
    "sched_getaffinity", "sched_setaffinity", "sched_yield", "nice", "getpriority",
    "setpriority", "unshare", "setns",
    # users and groups
    "getuid", "geteuid", "getgid", "getegid", "getgroups", "setuid", "setgid", "seteuid",
    "setegid", "setreuid", "setregid", "getresuid", "getresgid", "initgroups", "setgroups",
    "chown", "lchown", "fchown", "chroot",
    # files, terminals, the system
    "mkfifo", "mknod", "major", "minor", "makedev", "lockf", "F_LOCK", "F_TLOCK", "F_ULOCK",
    "F_TEST", "pipe2", "pread", "pwrite", "preadv", "pwritev", "readv", "writev", "sendfile",
    "posix_fadvise", "posix_fallocate", "memfd_create", "eventfd", "splice", "copy_file_range",
    "getxattr", "setxattr", "listxattr", "removexattr", "lchmod", "fchdir", "statvfs",
    "fstatvfs", "ttyname", "openpty", "ctermid", "login_tty", "tcgetpgrp", "tcsetpgrp", "sync",
    "uname", "getloadavg", "sysconf", "pathconf", "fpathconf", "confstr", "O_NONBLOCK",
    "O_NOCTTY", "O_CLOEXEC", "O_SYNC", "O_DSYNC", "O_NOFOLLOW", "O_DIRECTORY", "O_ASYNC",
    "EX_OK",
})

#: Path prefixes that name POSIX system folders or devices (Windows has none of them).
PATH_PREFIXES = ("/tmp", "/dev/", "/proc/", "/sys/")
