//! Reservation calendar: pools, reservations, allocations over time
