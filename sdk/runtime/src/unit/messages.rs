//! The messages between the runner, its workers and the Python front end
//! ([`crate::run::worker::send`] and [`crate::run::worker::receive`]): whole in one read
//! or in pieces, never past their end.

use std::io::Write;
use std::os::unix::net::UnixStream;

use crate::run::worker::{receive, send};

#[test]
fn a_message_comes_back_as_it_was_sent_short_long_and_empty() {
    let (mut a, mut b) = UnixStream::pair().unwrap();
    for body in [b"{}".to_vec(), vec![7u8; 200_000], Vec::new()] {
        let sent = body.clone();
        let writer = std::thread::spawn(move || send(&mut a, &sent).map(|()| a));
        assert_eq!(receive(&mut b).unwrap(), body);
        a = writer.join().unwrap().unwrap();
    }
}

#[test]
fn a_message_written_in_pieces_is_put_together() {
    let (mut a, mut b) = UnixStream::pair().unwrap();
    a.write_all(&[5, 0]).unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        a.write_all(&[0, 0, b'h', b'e']).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        a.write_all(b"llo").unwrap();
        a
    });
    assert_eq!(receive(&mut b).unwrap(), b"hello");
    drop(writer.join().unwrap());
}

#[test]
fn bytes_past_the_message_and_an_end_before_it_are_errors() {
    let (mut a, mut b) = UnixStream::pair().unwrap();
    a.write_all(&[1, 0, 0, 0, b'x', b'y']).unwrap();
    let e = receive(&mut b).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    let (mut a, mut b) = UnixStream::pair().unwrap();
    a.write_all(&[9, 0, 0, 0, b'x']).unwrap();
    drop(a);
    assert_eq!(
        receive(&mut b).unwrap_err().kind(),
        std::io::ErrorKind::UnexpectedEof
    );
    let (a, mut b) = UnixStream::pair().unwrap();
    drop(a);
    assert_eq!(
        receive(&mut b).unwrap_err().kind(),
        std::io::ErrorKind::UnexpectedEof
    );
}
