extension SplitMix64 {
    /// A generator for one sub-stream of a seed (a session, the catalog, the line shapes), so each
    /// stream is reproducible on its own: the seventh session is the same whether 10 or 10 000 are made.
    @inlinable
    package init(seed: UInt64, stream: UInt64) {
        var mixer = SplitMix64(seed: seed ^ (stream &* 0xD6E8_FEB8_6659_FD93))
        self.init(seed: mixer.next())
    }

    /// A random version-4 UUID in lowercase text form (`8-4-4-4-12` hex digits).
    package mutating func uuid() -> String {
        let hi = next()
        let lo = next()
        // Version 4 in the time_hi nibble, RFC 4122 variant in clock_seq_hi.
        let a = (hi & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let b = (lo & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        for i in 0..<16 {
            let word = i < 8 ? a : b
            let byte = UInt8(truncatingIfNeeded: word >> UInt64((7 - i % 8) * 8))
            if i == 4 || i == 6 || i == 8 || i == 10 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `true` with the given probability.
    @inlinable
    package mutating func chance(_ probability: Double) -> Bool {
        Double(next() >> 11) * 0x1.0p-53 < probability
    }

    /// A uniform double in `0..<1`.
    @inlinable
    package mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// An index drawn from `weights` (non-negative, not all zero) in proportion to each weight.
    package mutating func weighted(_ weights: [Double]) -> Int {
        let total = weights.reduce(0, +)
        var x = unit() * total
        for (i, w) in weights.enumerated() {
            if x < w { return i }
            x -= w
        }
        return weights.count - 1
    }
}
