//! Integration tests: property tests of the queries against naive tree walks, and document
//! round trips through the loader and the builder.

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod properties;
