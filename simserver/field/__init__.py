"""The field: season data (dimensions, AprilTag layouts) and the season's elements."""
