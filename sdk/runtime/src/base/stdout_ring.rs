//! What the device shows of a kernel's `printf` (docs/customop-api.md, "Device parity"):
//! core 0's text goes through a ring in DRAM that the Neuron runtime drains, read from the
//! public decode's "On-Device Virtual File-I/O Manager" page (HIGH there). The text is cut
//! into 240-byte pieces, each written to a 256-byte slot at `head % slots`, the oldest slot
//! overwritten when the ring is full (the `OVERWRITE` policy: the device never waits). The
//! ring has `NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES / 256` slots; 0, the runtime's
//! default, turns printf off; the guide takes a power of two up to 2 MiB.
//!
//! The runtime drains the ring while the op runs, so how much a long print loses there
//! depends on its timing; what is certain is that text past the ring's size is at risk,
//! and that with the variable unset nothing is shown. The host shows all of core 0's text
//! and warns of either ([`loss`]).

/// The environment variable the Neuron runtime sizes the ring by.
pub const QUEUE_ENV: &str = "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES";
/// A slot's bytes, and the text a slot carries (after its 16-byte header).
pub const SLOT_BYTES: u64 = 256;
pub const SLOT_TEXT: u64 = 240;
/// The largest ring the guide allows.
pub const MOST_BYTES: u64 = 2 << 20;

/// Why `NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES` leaves the device's printf without a
/// ring (base/stdout_ring.rs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StdoutQueue {
    #[error("{QUEUE_ENV} is not set, and the Neuron runtime's default, 0, turns the device's printf off (set it to a power of two up to {MOST_BYTES})")]
    Unset,
    #[error("{QUEUE_ENV}=0 turns the device's printf off")]
    Zero,
    /// The value as it was set.
    #[error("{QUEUE_ENV}={0} is not a power of two from {SLOT_BYTES} to {MOST_BYTES}, which the Neuron runtime takes (it sets up no ring otherwise)")]
    NotASize(String),
}

/// The ring's slots for the variable's value (`None`: unset), or why the device shows no
/// text.
pub fn slots(value: Option<&str>) -> Result<u64, StdoutQueue> {
    let Some(text) = value else {
        return Err(StdoutQueue::Unset);
    };
    match text.trim().parse::<u64>() {
        Ok(0) => Err(StdoutQueue::Zero),
        Ok(v) if v.is_power_of_two() && (SLOT_BYTES..=MOST_BYTES).contains(&v) => {
            Ok(v / SLOT_BYTES)
        }
        _ => Err(StdoutQueue::NotASize(text.into())),
    }
}

/// Why core 0's `printed` bytes may not all reach the host on the device, given the
/// variable's value: `None` when the ring holds them all.
pub fn loss(printed: usize, value: Option<&str>) -> Option<String> {
    if printed == 0 {
        return None;
    }
    let printed = printed as u64;
    match slots(value) {
        Err(why) => Some(format!(
            "core 0 printed {printed} bytes, which the device does not show: {why}"
        )),
        Ok(slots) => {
            let used = printed.div_ceil(SLOT_TEXT);
            (used > slots).then(|| {
                format!(
                    "core 0 printed {printed} bytes in {used} of the ring's {SLOT_TEXT}-byte pieces; the \
                     device's ring has {slots} ({QUEUE_ENV}={}) and overwrites the oldest when full, so \
                     the first {} bytes are lost unless the runtime drains the ring while the kernel prints",
                    value.unwrap_or_default().trim(),
                    (used - slots) * SLOT_TEXT
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_shows_nothing_unset_and_keeps_its_slots_when_set() {
        assert!(loss(0, None).is_none());
        assert!(loss(5, None).unwrap().contains("is not set"));
        assert!(loss(5, Some("0"))
            .unwrap()
            .contains("=0 turns the device's printf off"));
        assert!(loss(5, Some("1000"))
            .unwrap()
            .contains("is not a power of two"));
        assert!(loss(5, Some("4194304"))
            .unwrap()
            .contains("is not a power of two"));
        assert_eq!(slots(Some("2097152")), Ok(8192));
        // 1024 bytes: 4 slots, 960 bytes of text.
        assert_eq!(loss(960, Some("1024")), None);
        let lost = loss(961, Some("1024")).unwrap();
        assert!(
            lost.contains("in 5 of the ring's 240-byte pieces")
                && lost.contains("the first 240 bytes"),
            "{lost}"
        );
    }
}
