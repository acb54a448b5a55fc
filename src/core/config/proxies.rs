//! `PAYDESK_TRUSTED_PROXIES`: the load balancers in front of paydesk, and the client each
//! connection stands for.

use super::*;

/// The load balancers whose `X-Forwarded-For` is believed: addresses and CIDR ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(pub(super) Vec<(IpAddr, u8)>);

impl TrustedProxies {
    /// `10.0.0.0/8, 192.168.1.7, fd00::/8`; empty text trusts no one.
    pub fn parse(text: &str) -> Option<TrustedProxies> {
        let mut ranges = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (address, bits) = match item.split_once('/') {
                Some((address, bits)) => (address, Some(bits.parse::<u8>().ok()?)),
                None => (item, None),
            };
            let address: IpAddr = address.parse().ok()?;
            let width = if address.is_ipv4() { 32 } else { 128 };
            let bits = bits.unwrap_or(width);
            if bits > width {
                return None;
            }
            // `::ffff:10.0.0.0/104` is the IPv4 range it maps.
            match address.to_canonical() {
                IpAddr::V4(v4) if address.is_ipv6() && bits >= 96 => ranges.push((IpAddr::V4(v4), bits - 96)),
                _ => ranges.push((address, bits)),
            }
        }
        Some(TrustedProxies(ranges))
    }

    /// Whether `address` is one of the proxies.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.0.iter().any(|&(range, bits)| match (range, address) {
            (IpAddr::V4(r), IpAddr::V4(a)) => prefix(u128::from(u32::from(r)), u128::from(u32::from(a)), bits, 32),
            (IpAddr::V6(r), IpAddr::V6(a)) => prefix(u128::from(r), u128::from(a), bits, 128),
            _ => false,
        })
    }

    /// The client of a connection from `peer` that carried `forwarded` (the
    /// `X-Forwarded-For` lists, in order): the peer, unless it is a proxy; then the last
    /// address of the lists that is not one (each proxy appends who it heard from).
    pub fn client<'a>(&self, peer: IpAddr, forwarded: impl DoubleEndedIterator<Item = &'a str>) -> IpAddr {
        let mut client = peer.to_canonical();
        if !self.contains(client) {
            return client;
        }
        for hop in forwarded.rev().flat_map(|list| list.rsplit(',')) {
            let Some(hop) = hop_address(hop.trim()) else { break };
            client = hop.to_canonical();
            if !self.contains(client) {
                break;
            }
        }
        client
    }
}

/// The address of one `X-Forwarded-For` hop: `203.0.113.7`, `2001:db8::1`, or with a port
/// as some balancers write it (`203.0.113.7:5678`, `[2001:db8::1]:443`).
pub(super) fn hop_address(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| hop.strip_prefix('[')?.strip_suffix(']')?.parse().ok())
}

/// Whether the first `bits` of `a` and `b` (numbers of `width` bits) agree.
pub(super) fn prefix(a: u128, b: u128, bits: u8, width: u8) -> bool {
    let shift = u32::from(width - bits);
    bits == 0 || (a >> shift) == (b >> shift)
}
