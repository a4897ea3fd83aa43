extension RecordFormat {
    /// Writes to `out` the record body that `body`'s event would have without a session: its session reference
    /// left out and the session flag cleared, every other byte as it is. `false` (and `out` untouched) when `body`
    /// has no session.
    ///
    /// The store compares events without an event id by their bodies, and an event whose session it inferred must
    /// compare equal to the same event arriving again without one (docs/storage.md, "Duplicates").
    /// - Throws: ``CodecError`` when the body ends before its session reference.
    /// - Complexity: O(n) in the body's bytes.
    package static func bodyWithoutSession(_ body: UnsafeRawBufferPointer, into out: inout [UInt8])
        throws(CodecError) -> Bool
    {
        guard let base = body.baseAddress else { throw CodecError(offset: 0, reason: .truncated) }
        var r = ByteReader(base: base, position: 0, end: body.count)
        let tag = try r.byte()
        let flags = try r.varint()
        guard flags & flagSession != 0 else { return false }
        let afterFlags = r.position
        if flags & flagMeta != 0 {
            _ = try r.varint()  // screen client id
            _ = try r.varint()  // total screens
        }
        let sessionStart = r.position
        _ = try r.varint()
        let sessionEnd = r.position
        out.removeAll(keepingCapacity: true)
        out.append(tag)
        var rest = flags & ~flagSession
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: body[afterFlags..<sessionStart]))
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: body[sessionEnd...]))
        return true
    }
}
