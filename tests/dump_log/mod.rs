//! A reader of what `kafka-dump-log.sh --offsets-decoder` (Kafka's DumpLogSegments) prints for
//! `__consumer_offsets` segments: its batch lines and record lines. The tests that hold our
//! `kcp group history` and `offsets_log` reader to Kafka's own tool share it (`mod dump_log;`).
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::Value;

/// One record line: offset, CreateTime, key and payload JSON (`None`: `<DELETE>`), with the
/// key's `type` and the payload's `version` as numbers (DumpLogSegments prints them as strings).
#[derive(Debug)]
pub struct DumpRecord {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Value,
    pub payload: Option<Value>,
}

/// One batch line's fields (`baseOffset`, `lastOffset`, `count`, `position`, `compresscodec`,
/// `crc`, `isvalid`, `magic`, `CreateTime`) and the record lines that follow it.
#[derive(Debug)]
pub struct DumpBatch {
    pub fields: BTreeMap<String, String>,
    pub records: Vec<DumpRecord>,
}

impl DumpBatch {
    /// A numeric batch field.
    pub fn number(&self, name: &str) -> i64 {
        self.fields[name].parse().unwrap_or_else(|e| panic!("{name} {:?}: {e}", self.fields[name]))
    }
}

/// The value after `name: ` on a DumpLogSegments line, up to the next space.
fn field<'a>(line: &'a str, name: &str) -> &'a str {
    let start = line.find(&format!("{name}: ")).unwrap_or_else(|| panic!("{name} in {line}")) + name.len() + 2;
    line[start..].split(' ').next().unwrap()
}

/// Turns the string `tag` of a DumpLogSegments JSON object into a number, as we print it.
fn numbered(mut v: Value, tag: &str) -> Value {
    let n: i64 = v[tag].as_str().unwrap().parse().unwrap();
    v[tag] = n.into();
    v
}

/// Every batch of the output, each with its records.
pub fn parse_dump(text: &str) -> Vec<DumpBatch> {
    const BATCH_FIELDS: [&str; 9] =
        ["baseOffset", "lastOffset", "count", "position", "compresscodec", "crc", "isvalid", "magic", "CreateTime"];
    let mut batches: Vec<DumpBatch> = Vec::new();
    for line in text.lines() {
        if line.starts_with("baseOffset:") {
            let fields = BATCH_FIELDS.iter().map(|&name| (name.to_string(), field(line, name).to_string())).collect();
            batches.push(DumpBatch { fields, records: Vec::new() });
        } else if let Some(rest) = line.strip_prefix("| offset: ") {
            let key_at = rest.find(" key: ").unwrap() + 6;
            let payload_at = rest.find(" payload: ").unwrap();
            let key = numbered(serde_json::from_str(&rest[key_at..payload_at]).unwrap(), "type");
            let payload = &rest[payload_at + 10..];
            let payload = (payload != "<DELETE>").then(|| numbered(serde_json::from_str(payload).unwrap(), "version"));
            batches.last_mut().expect("a record line after a batch line").records.push(DumpRecord {
                offset: field(line, "offset").parse().unwrap(),
                timestamp: field(line, "CreateTime").parse().unwrap(),
                key,
                payload,
            });
        }
    }
    batches
}
