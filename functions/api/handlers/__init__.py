"""Lambda entry points: one thin Mangum adapter per function."""
