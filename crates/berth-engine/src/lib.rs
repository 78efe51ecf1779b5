//! Engine: template + inventory to problem to plan
