//! Human units in, human units out.
//!
//! Scenario files and command lines say "10Mbps", "50ms", "20MB", "80mW" or
//! "2000mAh@3.7V"; the models want bits per second, [`Duration`], bytes,
//! watts and joules. Parsing never panics: a bad string gives a [`UnitError`]
//! that quotes it and says why. Decimal prefixes (k, M, G, T) are powers of
//! 1000; binary ones (KiB, MiB, GiB, TiB) are powers of 1024. A plain number
//! is in the base unit: bit/s, seconds, bytes, watts, joules.

use core::fmt;
use joulenet_proto::Duration;

/// A string that is not a valid quantity: the text as given and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    pub text: String,
    pub reason: String,
}

impl UnitError {
    fn new(text: &str, reason: impl Into<String>) -> UnitError {
        UnitError {
            text: text.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid quantity \"{}\": {}", self.text, self.reason)
    }
}

impl std::error::Error for UnitError {}

/// Splits "1.5 Gbps" into (1.5, "Gbps"). The number must be finite and not
/// negative: no quantity in this crate can be negative.
fn split_quantity(text: &str) -> Result<(f64, &str), UnitError> {
    let trimmed = text.trim();
    let end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(end);
    if number.is_empty() {
        return Err(UnitError::new(text, "expected a number before the unit"));
    }
    let value: f64 = number
        .parse()
        .map_err(|_| UnitError::new(text, format!("\"{number}\" is not a number")))?;
    if !value.is_finite() {
        return Err(UnitError::new(text, "must be finite"));
    }
    if value < 0.0 {
        return Err(UnitError::new(text, "must not be negative"));
    }
    Ok((value, unit.trim()))
}

/// Looks `unit` up in a table of (name, scale) pairs.
fn scale_of(text: &str, unit: &str, table: &[(&str, f64)], kind: &str) -> Result<f64, UnitError> {
    table
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|&(_, scale)| scale)
        .ok_or_else(|| {
            let names: Vec<&str> = table
                .iter()
                .map(|(n, _)| *n)
                .filter(|n| !n.is_empty())
                .collect();
            UnitError::new(
                text,
                format!(
                    "unknown {kind} unit \"{unit}\" (expected one of {})",
                    names.join(", ")
                ),
            )
        })
}

/// Rounds a non-negative scaled value to an integer, rejecting overflow.
fn to_u64(text: &str, value: f64) -> Result<u64, UnitError> {
    let rounded = value.round();
    // 2^64 is exactly representable; anything at or above it does not fit.
    if rounded >= 18_446_744_073_709_551_616.0 {
        return Err(UnitError::new(text, "too large"));
    }
    Ok(rounded as u64)
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("bps", 1.0),
    ("bit/s", 1.0),
    ("b/s", 1.0),
    ("kbps", 1e3),
    ("kbit/s", 1e3),
    ("kb/s", 1e3),
    ("mbps", 1e6),
    ("mbit/s", 1e6),
    ("mb/s", 1e6),
    ("gbps", 1e9),
    ("gbit/s", 1e9),
    ("gb/s", 1e9),
];

/// Parses a bit rate into bits per second: "10Mbps", "10 Mbit/s",
/// "250kbps", "1.5Gbps", "9600bps", "1e6". Units are case-insensitive (a
/// milli-bit per second means nothing, so "mbps" can only mean megabits).
pub fn parse_rate(text: &str) -> Result<u64, UnitError> {
    let (value, unit) = split_quantity(text)?;
    let scale = scale_of(text, &unit.to_ascii_lowercase(), RATE_UNITS, "rate")?;
    let bps = to_u64(text, value * scale)?;
    if bps == 0 {
        return Err(UnitError::new(text, "rate must be positive"));
    }
    Ok(bps)
}

const DURATION_UNITS: &[(&str, f64)] = &[
    ("", 1e9),
    ("s", 1e9),
    ("sec", 1e9),
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("μs", 1e3),
    ("ms", 1e6),
    ("min", 60e9),
    ("h", 3600e9),
];

/// Parses a duration: "50ms", "1.5s", "250us" or "250µs", "10ns", "2min",
/// "1h"; a plain number is in seconds. Rounds to the nearest nanosecond.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let (value, unit) = split_quantity(text)?;
    let scale = scale_of(text, unit, DURATION_UNITS, "duration")?;
    Ok(Duration(to_u64(text, value * scale)?))
}

const SIZE_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("B", 1.0),
    ("byte", 1.0),
    ("bytes", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("KiB", 1024.0),
    ("MiB", 1_048_576.0),
    ("GiB", 1_073_741_824.0),
    ("TiB", 1_099_511_627_776.0),
];

/// Parses a size into bytes: "20MB" = 20·10^6, "5MiB" = 5·2^20, "1KB" =
/// 1000, "1KiB" = 1024, "1500B", "1500". Case-sensitive, so that a bit
/// ("Mb") is never silently read as a byte. Rounds to the nearest byte.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let (value, unit) = split_quantity(text)?;
    let scale = scale_of(text, unit, SIZE_UNITS, "size")?;
    to_u64(text, value * scale)
}

const POWER_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("W", 1.0),
    ("uW", 1e-6),
    ("µW", 1e-6),
    ("mW", 1e-3),
    ("kW", 1e3),
];

/// Parses a power into watts: "1.65W", "80mW", "1675 mW".
pub fn parse_power(text: &str) -> Result<f64, UnitError> {
    let (value, unit) = split_quantity(text)?;
    Ok(value * scale_of(text, unit, POWER_UNITS, "power")?)
}

const ENERGY_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("J", 1.0),
    ("uJ", 1e-6),
    ("µJ", 1e-6),
    ("mJ", 1e-3),
    ("kJ", 1e3),
    ("MJ", 1e6),
    ("mWh", 3.6),
    ("Wh", 3600.0),
    ("kWh", 3.6e6),
];

const CHARGE_UNITS: &[(&str, f64)] = &[("mAh", 3.6), ("Ah", 3600.0)];
const VOLTAGE_UNITS: &[(&str, f64)] = &[("V", 1.0), ("mV", 1e-3)];

/// Parses an energy into joules: "100J", "2kJ", "500mJ", "1Wh", or a battery
/// rating as charge at a voltage, "2000mAh@3.7V" (= 2 Ah · 3600 s/h · 3.7 V).
pub fn parse_energy(text: &str) -> Result<f64, UnitError> {
    if let Some((charge, voltage)) = text.split_once('@') {
        let (amount, unit) = split_quantity(charge)?;
        let coulombs = amount * scale_of(text, unit, CHARGE_UNITS, "charge")?;
        let (volts, unit) = split_quantity(voltage)?;
        return Ok(coulombs * volts * scale_of(text, unit, VOLTAGE_UNITS, "voltage")?);
    }
    let (value, unit) = split_quantity(text)?;
    Ok(value * scale_of(text, unit, ENERGY_UNITS, "energy")?)
}

/// Formats `value` with up to `decimals` decimals, dropping trailing zeros.
fn trimmed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// "10 Mbit/s", "1.5 Gbit/s", "9.6 kbit/s", "250 bit/s".
pub fn format_rate(bps: u64) -> String {
    let (scale, unit) = match bps {
        b if b >= 1_000_000_000 => (1e9, "Gbit/s"),
        b if b >= 1_000_000 => (1e6, "Mbit/s"),
        b if b >= 1_000 => (1e3, "kbit/s"),
        _ => (1.0, "bit/s"),
    };
    format!("{} {unit}", trimmed(bps as f64 / scale, 3))
}

/// "20.0 MB", "1.5 kB", "999 B": decimal units, one decimal above a kilobyte.
pub fn format_size(bytes: u64) -> String {
    let (scale, unit) = match bytes {
        b if b >= 1_000_000_000_000 => (1e12, "TB"),
        b if b >= 1_000_000_000 => (1e9, "GB"),
        b if b >= 1_000_000 => (1e6, "MB"),
        b if b >= 1_000 => (1e3, "kB"),
        b => return format!("{b} B"),
    };
    format!("{:.1} {unit}", bytes as f64 / scale)
}

/// "1.250 s", "12.500 ms", "3.000 µs", "10 ns": three decimals so that a
/// column of durations lines up.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    let (scale, unit) = match ns {
        n if n >= 1_000_000_000 => (1e9, "s"),
        n if n >= 1_000_000 => (1e6, "ms"),
        n if n >= 1_000 => (1e3, "µs"),
        n => return format!("{n} ns"),
    };
    format!("{:.3} {unit}", ns as f64 / scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_in_every_spelling() {
        assert_eq!(parse_rate("10Mbps"), Ok(10_000_000));
        assert_eq!(parse_rate("10 Mbit/s"), Ok(10_000_000));
        assert_eq!(parse_rate("250kbps"), Ok(250_000));
        assert_eq!(parse_rate("1.5Gbps"), Ok(1_500_000_000));
        assert_eq!(parse_rate("9600bps"), Ok(9600));
        assert_eq!(parse_rate("1e6"), Ok(1_000_000));
        assert_eq!(parse_rate(" 2 mbps "), Ok(2_000_000));
    }

    #[test]
    fn bad_rates_say_why() {
        let zero = parse_rate("0Mbps").unwrap_err();
        assert_eq!(zero.reason, "rate must be positive");
        assert_eq!(
            zero.to_string(),
            "invalid quantity \"0Mbps\": rate must be positive"
        );
        assert_eq!(
            parse_rate("-5Mbps").unwrap_err().reason,
            "must not be negative"
        );
        assert_eq!(
            parse_rate("NaN").unwrap_err().reason,
            "expected a number before the unit"
        );
        let unit = parse_rate("10 furlongs").unwrap_err();
        assert!(
            unit.reason.starts_with("unknown rate unit \"furlongs\""),
            "{unit}"
        );
        assert!(parse_rate("1e400").is_err());
        assert_eq!(parse_rate("1e30bps").unwrap_err().reason, "too large");
    }

    #[test]
    fn durations_in_every_unit() {
        assert_eq!(parse_duration("50ms"), Ok(Duration::from_millis(50)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("250µs"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("10ns"), Ok(Duration::from_nanos(10)));
        assert_eq!(parse_duration("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("0.1"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    }

    #[test]
    fn bad_durations_say_why() {
        assert_eq!(
            parse_duration("-1s").unwrap_err().reason,
            "must not be negative"
        );
        assert!(parse_duration("nan s").is_err());
        assert!(parse_duration("5 fortnights")
            .unwrap_err()
            .reason
            .contains("duration unit"));
        assert_eq!(parse_duration("1e12h").unwrap_err().reason, "too large");
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn sizes_decimal_and_binary() {
        assert_eq!(parse_size("20MB"), Ok(20_000_000));
        assert_eq!(parse_size("5MiB"), Ok(5 * 1_048_576));
        assert_eq!(parse_size("1KB"), Ok(1000));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("1.0004KB"), Ok(1000));
        assert_eq!(
            parse_size("-1B").unwrap_err().reason,
            "must not be negative"
        );
        assert!(parse_size("20Mb")
            .unwrap_err()
            .reason
            .contains("unknown size unit \"Mb\""));
    }

    #[test]
    fn powers_and_energies() {
        assert_eq!(parse_power("1.65W"), Ok(1.65));
        assert!((parse_power("80mW").unwrap() - 0.080).abs() < 1e-15);
        assert!((parse_power("1675 mW").unwrap() - 1.675).abs() < 1e-12);
        assert_eq!(parse_energy("100J"), Ok(100.0));
        assert_eq!(parse_energy("2kJ"), Ok(2000.0));
        assert!((parse_energy("500mJ").unwrap() - 0.5).abs() < 1e-15);
        assert!((parse_energy("250uJ").unwrap() - 250e-6).abs() < 1e-18);
        assert_eq!(parse_energy("1Wh"), Ok(3600.0));
        let battery = parse_energy("2000mAh@3.7V").unwrap();
        assert!((battery - 2.0 * 3600.0 * 3.7).abs() < 1e-9, "{battery}");
        assert!(parse_energy("2000mAh@").is_err());
        assert!(parse_energy("2000mAh@3.7X")
            .unwrap_err()
            .reason
            .contains("voltage unit"));
        assert!(parse_power("-1W").is_err());
    }

    #[test]
    fn formats_for_tables() {
        assert_eq!(format_rate(10_000_000), "10 Mbit/s");
        assert_eq!(format_rate(1_500_000_000), "1.5 Gbit/s");
        assert_eq!(format_rate(9600), "9.6 kbit/s");
        assert_eq!(format_rate(250), "250 bit/s");
        assert_eq!(format_size(20_000_000), "20.0 MB");
        assert_eq!(format_size(1500), "1.5 kB");
        assert_eq!(format_size(999), "999 B");
        assert_eq!(format_duration(Duration::from_millis(1250)), "1.250 s");
        assert_eq!(format_duration(Duration::from_micros(12_500)), "12.500 ms");
        assert_eq!(format_duration(Duration::from_nanos(10)), "10 ns");
    }

    #[test]
    fn formatted_values_parse_back() {
        for bps in [250, 9600, 10_000_000, 1_500_000_000] {
            assert_eq!(parse_rate(&format_rate(bps)), Ok(bps));
        }
        let d = Duration::from_micros(3);
        assert_eq!(parse_duration(&format_duration(d).replace(' ', "")), Ok(d));
    }
}
