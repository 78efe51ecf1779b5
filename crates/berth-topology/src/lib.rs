//! Datacenter location tree and network tree sharing leaves
