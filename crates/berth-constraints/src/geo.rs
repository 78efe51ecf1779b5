//! Great-circle distance (haversine, mean Earth radius) on precomputed points.

/// Mean Earth radius in km (IUGG), the radius every distance in Berth uses.
pub const EARTH_RADIUS_KM: f64 = 6371.0088;

/// A coordinate prepared for repeated haversine evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    lat: f64,
    lon: f64,
    cos_lat: f64,
}

impl Point {
    /// From latitude and longitude in degrees.
    pub fn new(latitude: f64, longitude: f64) -> Point {
        let lat = latitude.to_radians();
        Point {
            lat,
            lon: longitude.to_radians(),
            cos_lat: lat.cos(),
        }
    }

    /// Great-circle distance to `other` in km.
    pub fn distance_km(&self, other: &Point) -> f64 {
        let dlat = (other.lat - self.lat) / 2.0;
        let dlon = (other.lon - self.lon) / 2.0;
        let h = dlat.sin().powi(2) + self.cos_lat * other.cos_lat * dlon.sin().powi(2);
        2.0 * EARTH_RADIUS_KM * h.clamp(0.0, 1.0).sqrt().asin()
    }
}

/// Great-circle distance in km between two (latitude, longitude) pairs in degrees.
pub fn haversine_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    Point::new(a.0, a.1).distance_km(&Point::new(b.0, b.1))
}

/// Half the circumference: no two points are farther apart.
pub const MAX_DISTANCE_KM: f64 = std::f64::consts::PI * EARTH_RADIUS_KM;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dallas_to_new_york() {
        let d = haversine_km((32.89748, -97.040443), (40.7128, -74.006));
        assert!((d - 2216.0).abs() < 10.0, "{d}");
        assert_eq!(haversine_km((10.0, 20.0), (10.0, 20.0)), 0.0);
        let antipode = haversine_km((0.0, 0.0), (0.0, 180.0));
        assert!((antipode - MAX_DISTANCE_KM).abs() < 1e-6);
    }

    #[test]
    fn one_degree_of_latitude() {
        let d = haversine_km((0.0, 0.0), (1.0, 0.0));
        assert!((d - EARTH_RADIUS_KM.to_radians()).abs() < 1e-9);
    }
}
