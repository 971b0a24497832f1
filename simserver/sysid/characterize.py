"""Routine plus fit: the constants of a config's drivetrain or mechanism.

    result = characterize(load("robot.toml"))        # the drivetrain
    result.fit.ka                                    # V·s²/m, every wheel motor's data pooled
    result.fits["left"].r_squared                    # one motor output's own fit
"""

from __future__ import annotations

from dataclasses import dataclass

from simserver.config.model import Config
from simserver.sysid.fit import Fit, Run, fit_runs
from simserver.sysid.routine import Settings, Subject, prepare, run_routine, subject_of
from simserver.world import World


@dataclass(frozen=True)
class Result:
    """What the routine measured and what the fit made of it.

    subject: what was characterized. settings: the routine's. runs: motor output -> its four
    runs. fits: motor output -> the fit of its own data. fit: the fit of every driven motor's
    data together (the drivetrain's constants; the mechanism's for one motor).
    """

    subject: Subject
    settings: Settings
    runs: dict[str, list[Run]]
    fits: dict[str, Fit]
    fit: Fit


def characterize(cfg: Config, mechanism: str | None = None,
                 settings: Settings | None = None, threshold: float | None = None) -> Result:
    """Run the SysId routine on ``cfg``'s drivetrain (``mechanism`` None) or its mechanism
    ``mechanism`` and fit kS, kV, kA (kG). threshold: the trimming's velocity threshold,
    units/s (default: the noise floor). SysIdError for a subject or settings it cannot use;
    FitError when the data cannot give constants; ModelBuildError from the World."""
    settings = settings or Settings()
    settings.check()
    subject = subject_of(cfg, mechanism)
    runs = run_routine(World(prepare(cfg, subject)), subject, settings)
    return fit_result(subject, settings, runs, threshold)


def fit_result(subject: Subject, settings: Settings, runs: dict[str, list[Run]],
               threshold: float | None = None) -> Result:
    """The :class:`Result` of ``runs`` (from the routine or read back from its log)."""
    fits = {m: fit_runs(r, subject.gravity, threshold) for m, r in runs.items()}
    pooled = [run for r in runs.values() for run in r]
    fit = next(iter(fits.values())) if len(fits) == 1 else fit_runs(
        pooled, subject.gravity, threshold)
    return Result(subject, settings, runs, fits, fit)
