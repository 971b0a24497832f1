"""What ``simserver sysid`` prints: the constants with units, the fit quality and a
``characterization`` TOML table the config accepts.

    print(report(result))
    print(toml_snippet(result))
"""

from __future__ import annotations

import math

from simserver.sysid.characterize import Result
from simserver.sysid.fit import Fit

SLOW = 0.05
"""α below this: the mechanism settles within a sample period, so kA is poorly measured."""


def units(angular: bool) -> tuple[str, str, str]:
    """(position, kV, kA) units of a linear or rotary subject, as the config writes them."""
    return ("rad", "V*s/rad", "V*s^2/rad") if angular else ("m", "V*s/m", "V*s^2/m")


def warnings(result: Result) -> list[str]:
    """What makes the constants doubtful, one line each."""
    out = []
    fit = result.fit
    if fit.coefficients and fit.coefficients[0] < SLOW:
        tau = fit.ka / fit.kv if fit.kv > 0 else 0.0
        size = f"{tau * 1e3:.3g} ms" if tau > 0 else "too short to measure"
        out.append(f"kA is poorly measured: the mechanism's time constant ({size}) "
                   f"is short against the sample period ({fit.period * 1e3:.3g} ms); try a "
                   "shorter --period")
    slips = {run.state: round(run.slip * len(run.time)) for runs in result.runs.values()
             for run in runs if run.slip > 0.0}
    if slips:
        where = ", ".join(f"{n} samples of {state}" for state, n in slips.items())
        out.append(f"the wheels slipped on the carpet ({where}): kA and kS then describe "
                   "the tires, not the robot; lower --step-voltage (or --ramp-rate) until "
                   "no test slips")
    if fit.r_squared < 0.99:
        out.append(f"r² = {fit.r_squared:.4f}: the model explains the data poorly (wheel "
                   "slip, a current limit, hard stops?)")
    return out


def _row(name: str, fit: Fit, gravity: bool, offset: bool) -> str:
    cells = f"{name:<14}{fit.samples:>8}{fit.ks:>11.4f}{fit.kv:>16.5f}{fit.ka:>16.5f}"
    if gravity:
        cells += f"{fit.kg:>10.4f}"
    if offset:
        cells += f"{math.degrees(fit.offset):>13.3f}"
    return cells + f"{fit.r_squared:>12.8f}{fit.rmse:>15.3g}"


def report(result: Result, source: str = "") -> str:
    """The constants of ``result`` as a table, with the test settings and any warnings."""
    s, subject = result.settings, result.subject
    pos, kv, ka = units(subject.angular)
    gravity = subject.gravity != "none"
    offset = subject.gravity == "cosine"
    what = "drivetrain" if subject.kind == "drivetrain" else \
        f"mechanism {subject.name!r} ({subject.kind})"
    lines = [f"SysId of the {what}{' in ' + source if source else ''}",
             f"tests: quasistatic ±{s.ramp_rate:g} V/s, dynamic ±{s.step_voltage:g} V, "
             f"at most {s.timeout:g} s each, sampled every {result.fit.period * 1e3:.3g} ms",
             ""]
    head = f"{'motor':<14}{'samples':>8}{'kS (V)':>11}{'kV (' + kv + ')':>16}" \
           f"{'kA (' + ka + ')':>16}"
    if gravity:
        head += f"{'kG (V)':>10}"
    if offset:
        head += f"{'offset (deg)':>13}"
    lines.append(head + f"{'r²':>12}{'RMSE (' + pos + '/s)':>15}")
    for motor, fit in result.fits.items():
        lines.append(_row(motor, fit, gravity, offset))
    if len(result.fits) > 1:
        lines.append(_row("all", result.fit, gravity, offset))
    lines += [f"warning: {w}" for w in warnings(result)]
    return "\n".join(lines)


def toml_snippet(result: Result) -> str:
    """The ``characterization`` table of the subject with the fitted constants (kS below 0,
    a fit's rounding of no friction, written as 0)."""
    subject, fit = result.subject, result.fit
    _, kv, ka = units(subject.angular)
    table = "drivetrain" if subject.kind == "drivetrain" else f"mechanisms.{subject.name}"
    lines = [f"[{table}.characterization]",
             f'ks = "{max(fit.ks, 0.0):.3f} V"',
             f'kv = "{fit.kv:.6g} {kv}"',
             f'ka = "{fit.ka:.6g} {ka}"']
    if subject.gravity != "none":
        lines.append(f'kg = "{fit.kg:.6g} V"')
    return "\n".join(lines)
