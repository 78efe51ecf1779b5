//! Threshold values, quantities and units of homing templates
