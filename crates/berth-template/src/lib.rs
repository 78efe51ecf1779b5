//! Homing template model: parse, validate and resolve
