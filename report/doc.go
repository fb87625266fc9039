// Package report turns trials into the numbers a run publishes: it assigns each trial its
// verdict and computes the statistics behind every rate and comparison (Wilson intervals,
// McNemar's and Fisher's exact tests, Cohen's kappa for the judge's agreement).
//
// Everything here is a pure function of its inputs, seeded where it resamples, so a report
// rebuilt from the same run folder prints the same numbers; none of it knows of Temporal.
package report
