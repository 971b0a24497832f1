"""Free TCP ports on this machine: for robot programs and runs that must not meet on
WPILib's default ports."""

from __future__ import annotations

import os
import socket


def free_port() -> int:
    """A TCP port nothing listens on now (127.0.0.1). Another process may take it before the
    caller binds it: callers that can, retry with another."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def port_in_use(port: int) -> bool:
    """Whether TCP ``port`` cannot be listened on, on every interface, now."""
    with socket.socket() as s:
        if os.name == "posix":  # a port in TIME_WAIT is free; on Windows the option would
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # bind one in use
        try:
            s.bind(("", port))
        except OSError:
            return True
    return False
