//! Built-in constraint plugins for the solver
