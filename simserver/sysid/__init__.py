"""``simserver sysid``: WPILib's SysId routine on the simulated robot, its feedforward fit and
its data log (docs/sysid.md).

    result = characterize(cfg, "lift")
    result.fit.kv, result.fit.ka, result.fit.kg     # V·s/m, V·s²/m, V
    write_log("lift.wpilog", result.subject.name, result.runs, result.subject.angular)
"""

from simserver.sysid.characterize import Result, characterize
from simserver.sysid.fit import Fit, FitError, Run, fit_runs
from simserver.sysid.log import LogError, read_log, write_log
from simserver.sysid.routine import Settings, Subject, SysIdError

__all__ = ["Fit", "FitError", "LogError", "Result", "Run", "Settings", "Subject",
           "SysIdError", "characterize", "fit_runs", "read_log", "write_log"]
