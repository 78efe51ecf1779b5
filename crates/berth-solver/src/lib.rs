//! Optimizer core: problem IR, constraint trait, branch and bound, triage
