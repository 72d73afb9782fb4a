//! Reading TOML tables key by key, with errors that name the key.
//!
//! A [`Reader`] looks a key up in one or more layers (a flow's own table
//! over the `[flow]` defaults, say), remembers which keys were used, and
//! [`Reader::finish`] reports any key nobody asked for, with a suggestion.

use std::cell::RefCell;
use std::collections::BTreeSet;

use joulenet_channel::units;
use joulenet_proto::{Duration, NodeId};
use toml::{Table, Value};

use crate::OptionError as ScenarioError;

struct Layer<'a> {
    table: &'a Table,
    path: String,
}

pub struct Reader<'a> {
    layers: Vec<Layer<'a>>,
    used: RefCell<BTreeSet<String>>,
}

pub type Result<T> = std::result::Result<T, ScenarioError>;

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(f) if f.is_nan() => "nan (not a number)",
        Value::Float(f) if f.is_infinite() => "an infinite number",
        Value::Float(_) => "a number",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

impl<'a> Reader<'a> {
    pub fn new(table: &'a Table, path: &str) -> Reader<'a> {
        Reader {
            layers: vec![Layer {
                table,
                path: path.to_string(),
            }],
            used: RefCell::new(BTreeSet::new()),
        }
    }

    /// A reader whose keys come from `over` first, then from `base`.
    pub fn layered(
        over: Option<(&'a Table, String)>,
        base: Option<(&'a Table, String)>,
    ) -> Reader<'a> {
        let layers = [over, base]
            .into_iter()
            .flatten()
            .map(|(table, path)| Layer { table, path })
            .collect();
        Reader {
            layers,
            used: RefCell::new(BTreeSet::new()),
        }
    }

    /// The full name of `key` as the user wrote it (in the layer that has it).
    pub fn key(&self, key: &str) -> String {
        let layer = self
            .layers
            .iter()
            .find(|l| l.table.contains_key(key))
            .or(self.layers.first());
        join(layer.map_or("", |l| l.path.as_str()), key)
    }

    /// An error about `key`. When `key` is absent and a key nobody asked
    /// for is close to it, that key is named: inside an inline table a typo
    /// would otherwise be reported only as the key it misspells (the
    /// unknown-key check, [`Reader::finish`], runs after the table is read).
    pub fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        let mut message = message.into();
        if !self.has(key) {
            let used = self.used.borrow();
            let typo = closest(
                key,
                self.layers
                    .iter()
                    .flat_map(|l| l.table.keys())
                    .map(String::as_str)
                    .filter(|k| !used.contains(*k)),
            );
            if let Some(t) = typo {
                message.push_str(&format!(" (did you mean `{key}` where you wrote `{t}`?)"));
            }
        }
        ScenarioError::new(self.key(key), message)
    }

    pub fn has(&self, key: &str) -> bool {
        self.layers.iter().any(|l| l.table.contains_key(key))
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.used.borrow_mut().insert(key.to_string());
        self.layers.iter().find_map(|l| l.table.get(key))
    }

    fn expected(&self, key: &str, what: &str, got: &Value) -> ScenarioError {
        self.error(key, format!("expected {what}, got {}", type_name(got)))
    }

    pub fn str(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.expected(key, "a string", v)),
        }
    }

    pub fn req<T>(&self, key: &str, v: Result<Option<T>>) -> Result<T> {
        v?.ok_or_else(|| self.error(key, "required key is missing"))
    }

    pub fn bool(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.expected(key, "true or false", v)),
        }
    }

    pub fn f64(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
            Some(Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(v) => Err(self.expected(key, "a finite number", v)),
        }
    }

    pub fn u64(&self, key: &str) -> Result<Option<u64>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(Value::Integer(i)) => {
                Err(self.error(key, format!("must not be negative, got {i}")))
            }
            Some(v) => Err(self.expected(key, "a non-negative integer", v)),
        }
    }

    /// An integer in `lo..=hi`.
    pub fn int_in(&self, key: &str, lo: u64, hi: u64) -> Result<Option<u64>> {
        match self.u64(key)? {
            Some(v) if v < lo || v > hi => {
                Err(self.error(key, format!("must be in {lo}..={hi}, got {v}")))
            }
            v => Ok(v),
        }
    }

    /// A probability in [0, 1].
    pub fn probability(&self, key: &str) -> Result<Option<f64>> {
        match self.f64(key)? {
            Some(p) if !(0.0..=1.0).contains(&p) => {
                Err(self.error(key, format!("must be a probability in [0, 1], got {p}")))
            }
            p => Ok(p),
        }
    }

    fn unit<T>(
        &self,
        key: &str,
        what: &str,
        parse: impl Fn(&str) -> std::result::Result<T, units::UnitError>,
        number: impl Fn(f64) -> Option<T>,
    ) -> Result<Option<T>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => parse(s)
                .map(Some)
                .map_err(|e| self.error(key, e.to_string())),
            Some(Value::Integer(i)) => number(*i as f64)
                .map(Some)
                .ok_or_else(|| self.error(key, format!("{what} must be positive, got {i}"))),
            Some(Value::Float(f)) => number(*f)
                .map(Some)
                .ok_or_else(|| self.error(key, format!("{what} must be positive, got {f}"))),
            Some(v) => Err(self.expected(
                key,
                &format!("{what} (a number or a string with a unit)"),
                v,
            )),
        }
    }

    /// A rate in bit/s: `"10Mbps"` or a number of bit/s.
    pub fn rate(&self, key: &str) -> Result<Option<u64>> {
        self.unit(key, "a rate", units::parse_rate, |x| {
            (x.is_finite() && x >= 1.0).then_some(x.round() as u64)
        })
    }

    /// A duration: `"50ms"` or a number of seconds.
    pub fn duration(&self, key: &str) -> Result<Option<Duration>> {
        self.unit(key, "a duration", units::parse_duration, |x| {
            (x.is_finite() && x >= 0.0).then(|| Duration::from_secs_f64(x))
        })
    }

    /// A size in bytes: `"20MB"`, `"5MiB"` or a number of bytes.
    pub fn size(&self, key: &str) -> Result<Option<u64>> {
        self.unit(key, "a size", units::parse_size, |x| {
            (x.is_finite() && x >= 0.0).then_some(x.round() as u64)
        })
    }

    /// Power in watts: `"1.65W"`, `"80mW"` or a number of watts.
    pub fn power(&self, key: &str) -> Result<Option<f64>> {
        self.unit(key, "a power", units::parse_power, |x| {
            (x.is_finite() && x >= 0.0).then_some(x)
        })
    }

    /// Energy in joules: `"100J"`, `"2000mAh@3.7V"` or a number of joules.
    pub fn energy(&self, key: &str) -> Result<Option<f64>> {
        self.unit(key, "an energy", units::parse_energy, |x| {
            (x.is_finite() && x > 0.0).then_some(x)
        })
    }

    /// A sub-table read through the same layers.
    pub fn table(&self, key: &str) -> Result<Option<Reader<'a>>> {
        self.used.borrow_mut().insert(key.to_string());
        let mut layers = Vec::new();
        for l in &self.layers {
            match l.table.get(key) {
                None => {}
                Some(Value::Table(t)) => layers.push(Layer {
                    table: t,
                    path: join(&l.path, key),
                }),
                Some(v) => {
                    return Err(ScenarioError::new(
                        join(&l.path, key),
                        format!("expected a table, got {}", type_name(v)),
                    ))
                }
            }
        }
        Ok((!layers.is_empty()).then(|| Reader {
            layers,
            used: RefCell::new(BTreeSet::new()),
        }))
    }

    /// An array of tables from the first layer that has `key`.
    pub fn tables(&self, key: &str) -> Result<Vec<(&'a Table, String)>> {
        self.used.borrow_mut().insert(key.to_string());
        let Some(l) = self.layers.iter().find(|l| l.table.contains_key(key)) else {
            return Ok(Vec::new());
        };
        let path = join(&l.path, key);
        match &l.table[key] {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Table(t) => Ok((t, format!("{path}[{i}]"))),
                    v => Err(ScenarioError::new(
                        format!("{path}[{i}]"),
                        format!("expected a table, got {}", type_name(v)),
                    )),
                })
                .collect(),
            v => Err(ScenarioError::new(
                path,
                format!("expected an array of tables, got {}", type_name(v)),
            )),
        }
    }

    /// An array of strings.
    pub fn strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    v => Err(self.expected(key, "an array of strings", v)),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(Value::String(s)) => Ok(Some(vec![s.clone()])),
            Some(v) => Err(self.expected(key, "an array of strings", v)),
        }
    }

    /// An array of numbers (integers or floats).
    pub fn numbers(&self, key: &str) -> Result<Option<Vec<f64>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::Integer(i) => Ok(*i as f64),
                    Value::Float(f) => Ok(*f),
                    v => Err(self.expected(key, "an array of numbers", v)),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(v) => Err(self.expected(key, "an array of numbers", v)),
        }
    }

    /// Mark a key as known without reading it (it is read elsewhere).
    pub fn allow(&self, key: &str) {
        self.used.borrow_mut().insert(key.to_string());
    }

    /// Fail on any key that was never looked up.
    pub fn finish(&self) -> Result<()> {
        let used = self.used.borrow();
        for l in &self.layers {
            for k in l.table.keys() {
                if !used.contains(k) {
                    let mut msg = "unknown key".to_string();
                    if let Some(s) = closest(k, used.iter().map(String::as_str)) {
                        msg.push_str(&format!(" (did you mean `{s}`?)"));
                    }
                    return Err(ScenarioError::new(join(&l.path, k), msg));
                }
            }
        }
        Ok(())
    }
}

/// The known key nearest to `key` by edit distance, if it is close.
fn closest<'k>(key: &str, known: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    known
        .map(|k| (edit_distance(key, k), k))
        .filter(|&(d, k)| d <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A node given by index or by name.
pub fn node_ref(r: &Reader, key: &str, names: &[String]) -> Result<NodeId> {
    match r.get(key) {
        Some(Value::Integer(i)) if *i >= 0 && (*i as usize) < names.len() => Ok(*i as NodeId),
        Some(Value::Integer(i)) => Err(r.error(
            key,
            format!("no node {i} (nodes are 0..{})", names.len() - 1),
        )),
        Some(Value::String(s)) => names
            .iter()
            .position(|n| n == s)
            .map(|i| i as NodeId)
            .ok_or_else(|| {
                r.error(
                    key,
                    format!("no node named \"{s}\" (nodes: {})", names.join(", ")),
                )
            }),
        Some(_) => Err(r.error(key, "expected a node index or name")),
        None => Err(r.error(key, "required key is missing")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> Table {
        s.parse::<Table>().unwrap()
    }

    #[test]
    fn unknown_key_is_named_with_a_suggestion() {
        let t = table("rate = \"1Mbps\"\ndelya = \"5ms\"");
        let r = Reader::new(&t, "link");
        r.rate("rate").unwrap();
        r.duration("delay").unwrap();
        let e = r.finish().unwrap_err();
        assert_eq!(e.key, "link.delya");
        assert!(e.message.contains("did you mean `delay`"), "{}", e.message);
    }

    #[test]
    fn layered_lookup_names_the_layer_that_had_the_key() {
        let over = table("rate = \"fast\"");
        let base = table("rate = \"1Mbps\"\ndelay = 2");
        let r = Reader::layered(
            Some((&over, "flows[1]".into())),
            Some((&base, "flow".into())),
        );
        let e = r.rate("rate").unwrap_err();
        assert_eq!(e.key, "flows[1].rate");
        assert_eq!(r.duration("delay").unwrap(), Some(Duration::from_secs(2)));
    }

    #[test]
    fn type_errors_say_what_was_expected() {
        let t = table("queue = \"big\"\np = 1.5");
        let r = Reader::new(&t, "link");
        assert!(r
            .u64("queue")
            .unwrap_err()
            .message
            .contains("non-negative integer"));
        let e = r.probability("p").unwrap_err();
        assert_eq!(e.key, "link.p");
        assert!(e.message.contains("[0, 1]"));
    }

    #[test]
    fn a_typo_of_a_required_key_is_named() {
        let t = table("good = { mean = \"2s\", los = 0.1 }");
        let r = Reader::new(&t, "link.loss");
        let good = r.table("good").unwrap().unwrap();
        let e = good.req("loss", good.probability("loss")).unwrap_err();
        assert_eq!(e.key, "link.loss.good.loss");
        assert!(e.message.contains("`los`"), "{}", e.message);
        assert!(e.message.contains("did you mean `loss`"), "{}", e.message);
        // Nothing close: no suggestion.
        let e = good.req("zzzzzz", good.f64("zzzzzz")).unwrap_err();
        assert_eq!(e.message, "required key is missing");
    }

    #[test]
    fn nan_and_infinity_are_not_called_numbers() {
        for (text, word) in [
            ("x = nan", "nan"),
            ("x = inf", "infinite"),
            ("x = -inf", "infinite"),
        ] {
            let t = table(text);
            let e = Reader::new(&t, "").f64("x").unwrap_err();
            assert!(e.message.contains(word), "{text}: {}", e.message);
            assert!(e.message.contains("finite"), "{text}: {}", e.message);
        }
    }
}
