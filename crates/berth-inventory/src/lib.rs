//! Candidates, inventory providers and service controllers
