//! TNC-O assembly descriptors: validate, resolve properties, plan instantiation, scale.
