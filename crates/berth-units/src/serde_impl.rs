//! Optional serde support: units, quantities and thresholds travel as their canonical strings.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Family, Quantity, Threshold, Unit};

impl Serialize for Unit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.symbol())
    }
}

impl<'de> Deserialize<'de> for Unit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.is_empty() {
            return Ok(Unit::One);
        }
        text.parse()
            .map_err(|e: crate::ParseError| D::Error::custom(e.message()))
    }
}

impl Serialize for Family {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Family {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Family::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(&text))
            .ok_or_else(|| {
                D::Error::custom(format!(
                    "unknown unit family `{text}`; expected one of distance, time, throughput, currency, dimensionless"
                ))
            })
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|e: crate::ParseError| D::Error::custom(e.message()))
    }
}

impl Serialize for Threshold {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Threshold::parse_any(&text).map_err(|e| D::Error::custom(e.message()))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Family, Quantity, Threshold, Unit};

    #[test]
    fn serde_uses_canonical_strings() {
        let t = Threshold::parse_any("<= 1.5 MI").unwrap();
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"<=1.5 mi\"");
        assert_eq!(serde_json::from_str::<Threshold>(&json).unwrap(), t);
        assert_eq!(serde_json::to_string(&Unit::Kbps).unwrap(), "\"Kbps\"");
        assert_eq!(serde_json::from_str::<Unit>("\"s\"").unwrap(), Unit::Sec);
        assert_eq!(serde_json::to_string(&Family::Time).unwrap(), "\"time\"");
        let q: Quantity = serde_json::from_str("\"3 Gbps\"").unwrap();
        assert_eq!(q, Quantity::new(3.0, Unit::Gbps));
        let err = serde_json::from_str::<Threshold>("\"<5 kms\"").unwrap_err();
        assert!(err.to_string().contains("unknown unit `kms`"), "{err}");
    }
}
