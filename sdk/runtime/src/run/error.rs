//! What a run refuses or cannot do, each with its reason in words.

use crate::base::codes::DeviceRequest;

/// An error of the run layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum RunError {
    /// The command line or a call's arguments are refused: nothing runs (exit status
    /// `ExitStatus::Refused`).
    #[error("{0}")]
    Refused(String),
    /// The output file cannot be reserved or written.
    #[error("{0}")]
    OutFile(String),
    /// `--profile`'s files cannot be made.
    #[error("{0}")]
    Profile(String),
    /// The device program's request cannot be answered: its run ends with this.
    #[error("{0}")]
    Unanswered(Unanswered),
}

/// Why a request of the device program cannot be answered (run/device/answer.rs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum Unanswered {
    /// A code the protocol does not have.
    #[error("a request of unknown code {0}")]
    UnknownCode(u32),
    /// A payload shorter than its struct.
    #[error("a {request:?} request whose payload ends {bytes} bytes short (the program and the runner are from different SDKs?)")]
    Short {
        #[serde(with = "code")]
        request: DeviceRequest,
        bytes: usize,
    },
    /// A payload longer than its struct, where nothing follows it.
    #[error("a {request:?} request whose payload has {bytes} bytes past its fields (the program and the runner are from different SDKs?)")]
    Long {
        #[serde(with = "code")]
        request: DeviceRequest,
        bytes: usize,
    },
    /// The runner read a request as another struct than the protocol gives it.
    #[error("the runner read a {request:?} request as struct nt_device_{read}, which protocol.h does not give it (the runtime's bug)")]
    OtherStruct {
        #[serde(with = "code")]
        request: DeviceRequest,
        read: String,
    },
    /// A second START: the runner answers the one at the program's start.
    #[error("a START past start(), which answers every START")]
    StartAgain,
}

/// A request as its code, between a core's process and the runner.
mod code {
    use crate::base::codes::DeviceRequest;

    pub fn serialize<S: serde::Serializer>(r: &DeviceRequest, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(r.code())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<DeviceRequest, D::Error> {
        let c = <u32 as serde::Deserialize>::deserialize(d)?;
        DeviceRequest::from_code(c)
            .ok_or_else(|| serde::de::Error::custom(format!("no device request has code {c}")))
    }
}
