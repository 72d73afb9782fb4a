//! Every wire format's checked view and `Repr::parse`: the first byte picks
//! the format, the rest is the packet.
#![no_main]

use joulenet_wire::{e2tcp, ipv4, rcp, tcp, udp, wwp};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, p)) = data.split_first() else {
        return;
    };
    match which % 6 {
        0 => {
            if let Ok(v) = tcp::TcpPacket::new_checked(p) {
                let _ = tcp::TcpRepr::parse(&v);
            }
        }
        1 => {
            if let Ok(v) = ipv4::Ipv4Packet::new_checked(p) {
                let _ = ipv4::Ipv4Repr::parse(&v);
            }
        }
        2 => {
            if let Ok(v) = udp::UdpPacket::new_checked(p) {
                let _ = udp::UdpRepr::parse(&v);
            }
        }
        3 => {
            if let Ok(v) = e2tcp::E2tcpPacket::new_checked(p) {
                let _ = e2tcp::E2tcpRepr::parse(&v);
            }
        }
        4 => {
            if let Ok(v) = wwp::WwpPacket::new_checked(p) {
                let _ = wwp::WwpRepr::parse(&v);
            }
        }
        _ => {
            let _ = rcp::parse(p);
        }
    }
});
