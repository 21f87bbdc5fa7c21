//! The validator and the emulator check each other: every counterexample `make prove`
//! found against a mutant of the device object (target/prove/mutants/*.json) is replayed
//! under qemu through the mutant and through the real object. The real object must do what
//! the host library computes for the same inputs (the contract). Where the mutant's fault
//! shows in what the call returns or leaves in memory, the mutant must differ there; where
//! it is only the order of two stores or a missing barrier (which leave the same memory
//! behind, and which qemu cannot show), the mutant must leave exactly the same memory, as
//! the validator's refutation says.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use neuron_translate::layout::offsets::{CTX_SIZE, RECORD_ARRAY, RECORD_SIZE, REG_LOCATION};
use neuron_translate::{initial_table, sbuf_window, InitInputs, RegisterLog, TranslationCtx};
use nt_support::qemu::{compile_c, link_with, root, run, start_object};
use nt_support::tools::{product, scratch};

fn hex(v: &serde_json::Value) -> u64 {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("{v} is not a hex string"));
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

/// What a program printed: its return line and the area's bytes, or the signal it died of.
#[derive(Debug, PartialEq, Eq)]
enum Run {
    Returned(u64, Vec<u8>),
    Signal(i32),
}

fn replay(dir: &Path, device: &Path, header: &str, area: u32, name: &str) -> Run {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("replay.h"), header).unwrap();
    let q = root().join("abi-tests/qemu");
    let include = root().join("include");
    let mut objs = vec![start_object(&d)];
    for (src, out) in [
        (q.join("replay.c"), "main.o"),
        (q.join("support.c"), "support.o"),
    ] {
        let o = d.join(out);
        compile_c(&src, &o, &[&include, &q, &d]);
        objs.push(o);
    }
    let elf = d.join("replay.elf");
    link_with(&objs, device, &[(".replay", area)], &elf);
    let out = run(&elf);
    if let Some(sig) = out.status.signal() {
        return Run::Signal(sig);
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = |p: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(p))
            .unwrap_or_else(|| panic!("no {p:?} in {text}"))
    };
    let words: Vec<u64> = line("area ")
        .split("0x")
        .filter(|w| !w.is_empty())
        .map(|w| u64::from_str_radix(w, 16).unwrap())
        .collect();
    Run::Returned(
        u64::from_str_radix(line("ret ").trim_start_matches("0x"), 16).unwrap(),
        words.into_iter().map(|b| b as u8).collect(),
    )
}

/// What the host library's span does with the area's bytes placed at the device's own
/// addresses (the validator places a span's counterexample with register locations whose
/// high words are 0, which the host then uses as they are): the same stores, register
/// blocks over the table included, and the same span.
fn expected_span(area: u64, bytes: &[u8], addr: u64, len: u64, out_span: u64) -> Run {
    let mut image = [0u8; CTX_SIZE];
    image.copy_from_slice(&bytes[..CTX_SIZE]);
    let mut t = TranslationCtx::from_bytes(&image);
    for k in 0..5 {
        let at = RECORD_ARRAY + k * RECORD_SIZE + REG_LOCATION;
        let reg = u64::from_le_bytes(image[at..at + 8].try_into().unwrap());
        assert!(
            reg >> 32 == 0 && (reg == 0 || (area..=area + bytes.len() as u64 - 8).contains(&reg)),
            "register location {reg:#x} is not placed for the replay"
        );
    }
    assert!(
        out_span == 0 || (area..=area + bytes.len() as u64 - 8).contains(&out_span),
        "out_span is not placed for the replay"
    );
    if t.translate_span(addr, len, &mut RegisterLog::default())
        .is_err()
    {
        // The C entry point traps here as the device does (SIGILL), which would end this
        // test; the contract's answer is the trap.
        return Run::Signal(libc::SIGILL);
    }
    // SAFETY: a fresh private mapping at a fixed address, refused (not replaced) if
    // anything is mapped there; unmapped below.
    let p = unsafe {
        libc::mmap(
            area as usize as *mut libc::c_void,
            bytes.len(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    assert_eq!(
        p as u64, area,
        "the replay area's address is free in this process"
    );
    // SAFETY: the mapping is `bytes.len()` bytes long and ours alone.
    let mem = unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), bytes.len()) };
    mem.copy_from_slice(bytes);
    let out = out_span as usize as *mut u64;
    // SAFETY: the table is the area's first bytes; its register locations and the output
    // (or NULL) lie in the area: the validator's placement, checked in the caller.
    let ret = unsafe { neuron_translate::abi::neuron_translate_span(p, addr, len, out) };
    let after = mem.to_vec();
    // SAFETY: the mapping made above.
    unsafe { libc::munmap(p, bytes.len()) };
    Run::Returned(ret as u64, after)
}

/// What the contract says, through the host library, for a table-function vector: the
/// device reads only the low word of each register location.
fn expected(function: &str, area: u64, bytes: &[u8], addr: u64, outs: (u64, u64)) -> Run {
    let mut mem = bytes.to_vec();
    let mut image = [0u8; CTX_SIZE];
    image.copy_from_slice(&mem[..CTX_SIZE]);
    for k in 0..5 {
        let at = RECORD_ARRAY + k * RECORD_SIZE + REG_LOCATION + 4;
        image[at..at + 4].fill(0);
    }
    let mut t = TranslationCtx::from_bytes(&image);
    let put = |mem: &mut Vec<u8>, at: u64, v: &[u8]| {
        let o = (at - area) as usize;
        mem[o..o + v.len()].copy_from_slice(v);
    };
    match function {
        "neuron_translate" => {
            let mut log = RegisterLog::default();
            let Ok(local) = t.translate(addr, &mut log) else {
                return Run::Signal(libc::SIGILL);
            };
            // The table's own bytes first (the record's tag, next_alloc), then the register
            // stores, as the contract orders them: a register block over the table wins.
            let after = t.to_bytes();
            for (i, (b, a)) in image.iter().zip(after.iter()).enumerate() {
                if b != a {
                    mem[i] = *a;
                }
            }
            for (reg, tag) in log.0 {
                put(
                    &mut mem,
                    reg as u64 + 4,
                    &((tag >> 32) as u32).to_le_bytes(),
                );
                put(&mut mem, reg as u64, &(tag as u32).to_le_bytes());
            }
            // next_alloc is the last store.
            mem[neuron_translate::layout::offsets::NEXT_ALLOC] =
                after[neuron_translate::layout::offsets::NEXT_ALLOC];
            Run::Returned(u64::from(local), mem)
        }
        _ => match t.lookup(addr) {
            None => Run::Returned(0xFFFF_FFFF, mem),
            Some(m) => {
                if outs.0 != 0 {
                    put(&mut mem, outs.0, &m.start.to_le_bytes());
                }
                if outs.1 != 0 {
                    put(&mut mem, outs.1, &m.end.to_le_bytes());
                }
                Run::Returned(0, mem)
            }
        },
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn every_counterexample_of_a_mutant_replays_under_qemu() {
    let dir = root().join("target/prove/mutants");
    let vectors: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|_| panic!("{}: run `make prove` first", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(
        vectors.len(),
        6,
        "one vector per mutant of prove/mutants.py"
    );
    let work = scratch("prove_replay");
    for path in vectors {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let name = v["mutant"].as_str().unwrap();
        let cx = &v["refuted"][0]["counterexample"];
        let function = cx["function"].as_str().unwrap();
        let mutant = path.with_extension("o");
        let (header, area, want) = if function == "_init_translate_ctx" {
            init_replay(cx)
        } else {
            call_replay(name, function, cx)
        };
        let real = replay(
            &work,
            &product("NT_DEVICE_OBJ"),
            &header,
            area,
            &format!("{name}-real"),
        );
        let bad = replay(&work, &mutant, &header, area, &format!("{name}-mutant"));
        assert_eq!(
            real, want,
            "{name}: the real object under qemu against the host library"
        );
        if v["observable_by_emulation"] == true {
            assert_ne!(
                real, bad,
                "{name}: the validator's counterexample makes no difference under qemu"
            );
        } else {
            assert_eq!(
                real, bad,
                "{name}: an order or barrier fault, yet the memory differs"
            );
        }
    }
}

/// The replay of `_init_translate_ctx`'s counterexample `cx`: the driver's header, the
/// area, and what the host library gives.
fn init_replay(cx: &serde_json::Value) -> (String, u32, Run) {
    let inputs = InitInputs {
        engine_base: hex(&cx["engine_base"]),
        hbm_scratch: hex(&cx["hbm_scratch"]),
    };
    let header = format!(
                "#define NT_REPLAY_FUNCTION 2\n#define NT_REPLAY_ENGINE_BASE {:#x}ull\n#define NT_REPLAY_HBM_SCRATCH {:#x}ull\n\
                 #define NT_REPLAY_ADDR 0\n#define NT_REPLAY_OUT_START 0\n#define NT_REPLAY_OUT_END 0\n\
                 #define NT_REPLAY_LEN 0\n#define NT_REPLAY_OUT_SPAN 0\n\
                 static const unsigned char nt_area_init[8] = {{0}};\n",
                inputs.engine_base, inputs.hbm_scratch
            );
    let want = Run::Returned(
        sbuf_window(inputs.engine_base),
        initial_table(&inputs).to_bytes().to_vec(),
    );
    (header, 0x2000_0000u32, want)
}

/// The replay of a call's counterexample `cx` (of `function`, mutant `name`): the driver's
/// header, the area the table is placed in, and what the host library gives.
fn call_replay(name: &str, function: &str, cx: &serde_json::Value) -> (String, u32, Run) {
    let area = hex(&cx["replay_area"][0]);
    let size = hex(&cx["replay_area"][1]) as usize;
    assert_eq!(
        hex(&cx["ctx"]),
        area,
        "{name}: the counterexample is placed for the replay"
    );
    let table = (0..CTX_SIZE)
        .map(|i| u8::from_str_radix(&cx["table"].as_str().unwrap()[2 * i..2 * i + 2], 16).unwrap());
    let mut bytes: Vec<u8> = table.collect();
    bytes.resize(size, 0);
    let addr = hex(&cx["addr"]);
    let outs = if function == "neuron_translate_mapping_lookup" {
        (hex(&cx["out_start"]), hex(&cx["out_end"]))
    } else {
        (0, 0)
    };
    let (len, out_span) = if function == "neuron_translate_span" {
        (hex(&cx["len"]), hex(&cx["out_span"]))
    } else {
        (0, 0)
    };
    let code = match function {
        "neuron_translate" => 0,
        "neuron_translate_mapping_lookup" => 1,
        "neuron_translate_span" => 3,
        other => panic!("{name}: no replay for {other}"),
    };
    let list: Vec<String> = bytes.iter().map(|b| format!("{b:#x}")).collect();
    let header = format!(
                "#define NT_REPLAY_FUNCTION {code}\n#define NT_REPLAY_ENGINE_BASE 0\n#define NT_REPLAY_HBM_SCRATCH 0\n\
                 #define NT_REPLAY_ADDR {addr:#x}ull\n#define NT_REPLAY_OUT_START {:#x}u\n#define NT_REPLAY_OUT_END {:#x}u\n\
                 #define NT_REPLAY_LEN {len:#x}ull\n#define NT_REPLAY_OUT_SPAN {out_span:#x}u\n\
                 static const unsigned char nt_area_init[{size}] = {{{}}};\n",
                outs.0,
                outs.1,
                list.join(",")
            );
    let want = if code == 3 {
        expected_span(area, &bytes, addr, len, out_span)
    } else {
        expected(function, area, &bytes, addr, outs)
    };
    (header, area as u32, want)
}
