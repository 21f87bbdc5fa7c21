//! The device protocol's payloads (`crate::base::wire`): one exchange per request, in the
//! order of their codes; each struct's bytes its fields' on the wire, read back as written.

use crate::base::codes::DeviceRequest;
use crate::base::wire::{self, Payload, Wire, EXCHANGES, LAYOUTS};

#[test]
fn every_request_has_one_exchange_in_the_order_of_their_codes() {
    let requests: Vec<DeviceRequest> = EXCHANGES.iter().map(|x| x.request).collect();
    assert_eq!(requests, DeviceRequest::ALL);
    // A request with nothing but a tail names it; START asks nothing and answers a struct.
    for x in EXCHANGES {
        assert!(x.ask.is_some() || !x.ask_tail.is_empty() || x.request == DeviceRequest::Start);
    }
}

#[test]
fn a_structs_bytes_are_its_fields_in_order_and_read_back_as_written() {
    let q = wire::Apply {
        op: -3,
        out: 7,
        operands: [wire::Operand {
            kind: 2,
            handle: 9,
            i: -1,
            f: 0.5,
        }; 3],
        site: 0x1234_5678,
    };
    let mut out = Vec::new();
    q.put(&mut out);
    assert_eq!(out.len(), wire::Apply::BYTES);
    assert_eq!(wire::Apply::BYTES, 4 + 4 + 3 * (4 + 4 + 8 + 8) + 4);
    assert_eq!(&out[..8], &[0xfd, 0xff, 0xff, 0xff, 7, 0, 0, 0]);
    assert_eq!(&out[out.len() - 4..], &0x1234_5678u32.to_le_bytes());
    let mut bytes = out.as_slice();
    assert_eq!(wire::Apply::take(&mut bytes), Some(q));
    assert!(bytes.is_empty());
    let mut short = &out[..out.len() - 1];
    assert_eq!(wire::Apply::take(&mut short), None);
}

#[test]
fn each_layout_lists_its_fields_with_their_c_types_and_its_bytes() {
    let l = wire::Return::LAYOUT;
    let fields: Vec<(&str, &str, usize)> = l
        .fields
        .iter()
        .map(|f| (f.name, f.c_type, f.count))
        .collect();
    let records = neuron_translate::layout::RECORDS;
    assert_eq!(
        fields,
        [
            ("handle", "uint32_t", 0),
            ("translations", "uint64_t", 0),
            ("hits", "uint64_t", records),
            ("refills", "uint64_t", records),
        ]
    );
    assert_eq!(l.bytes, 4 + 8 + 16 * records);
    let names: Vec<&str> = LAYOUTS.iter().map(|l| l.c_name).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        names.len(),
        "each struct named once: {names:?}"
    );
    // A struct another holds comes before it (C's order).
    let operand = names.iter().position(|n| *n == "operand");
    let apply = names.iter().position(|n| *n == "apply");
    assert!(operand < apply);
}
