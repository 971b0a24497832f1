"""Pure physics models: no ntcore, no click, no wall clock. SI units throughout."""
