"""Write the autonomous trajectory to deploy/paths/ as PathWeaver JSON.

Run it after changing paths.py or constants.py, and commit the output:

    python make_path.py
"""

import pathlib

import paths
from wpimath.trajectory import TrajectoryUtil

OUTPUT = pathlib.Path(__file__).resolve().parent / "deploy" / "paths" / paths.AUTO_PATH_FILE


def main() -> None:
    trajectory = paths.make_auto_trajectory()
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    TrajectoryUtil.toPathweaverJson(trajectory, str(OUTPUT))
    end = trajectory.states()[-1].pose
    print(
        f"wrote {OUTPUT}: {len(trajectory.states())} states, "
        f"{trajectory.totalTime():.3f} s, ends at "
        f"({end.X():.3f} m, {end.Y():.3f} m, {end.rotation().degrees():.1f} deg)"
    )


if __name__ == "__main__":
    main()
