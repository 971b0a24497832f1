"""Where the robot program's NetworkTables server listens (``bridge.nt_port``).

RobotBase starts the program's NT server on WPILib's ports (NT4 5810, NT3 1735) after the
simulation extensions have loaded, and ntcore ignores a second ``startServer`` in a process.
So the bridge, loaded first, can start it on another port: then several robot programs run
on one machine side by side, each with its own ``bridge.nt_port`` and ``bridge.port``.
"""

from __future__ import annotations

from simserver.config.limits import ROBOT_NT_PORT
from simserver.util.ports import port_in_use

#: The persistent-values file RobotBase's server uses (in the program's directory).
PERSIST_FILE = "networktables.json"


def move_server(port: int) -> str | None:
    """Start the program's NT4 server on ``port`` (every interface, no NT3 port) unless it is
    WPILib's own, which RobotBase starts. Returns why it cannot (the port is taken), else
    None. Call before RobotBase starts."""
    if port == ROBOT_NT_PORT:
        return None
    if port_in_use(port):
        return f"TCP port {port} (bridge.nt_port) is in use: choose a free one"
    import ntcore

    ntcore.NetworkTableInstance.getDefault().startServer(PERSIST_FILE, "", 0, port)
    return None
