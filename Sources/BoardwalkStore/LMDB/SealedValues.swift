import BoardwalkCodec
import BoardwalkStoreFormat

// Values of the databases without a checksum in their own format (`meta`, the session index and its log,
// `onboarding_sessions`, `spanning_sessions`, `batches`, `inferred_sessions`, `onboardings`, `checkpoints`) are
// stored sealed: a CRC-32C of the key and the value in front of the value, as event blocks and string chunks carry
// one. `Transaction` and `Cursor` add it on every put and check and remove it on every read of such a database,
// so every reader sees the value as its format describes it, and a flipped bit in any stored byte is noticed where
// it is read.

extension Database {
    /// Whether the store seals this database's values (``Layout/sealed``).
    static func seals(_ name: String) -> Bool { Layout.sealed.contains(name) }
}

enum SealedValue {
    /// The value of a sealed `stored` value under `key` of `db`, its checksum checked.
    /// - Throws: ``StoreError/Kind/corrupt`` naming the database and key when the checksum does not match.
    @inline(__always)
    static func open(_ stored: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, _ db: Database) throws
        -> UnsafeRawBufferPointer
    {
        // Not StoredChecksum.verify: a sealed value may be empty (a checkpoint's), where a block or chunk may not.
        guard stored.count >= StoredChecksum.size else {
            throw StoreError(
                .corrupt,
                "the `\(db.name)` entry under key \(describe(key)) is damaged: it is \(stored.count) bytes long, "
                    + "shorter than its checksum, and it is not read",
                underlying: CodecError(offset: stored.count, reason: .truncated))
        }
        let value = UnsafeRawBufferPointer(rebasing: stored[StoredChecksum.size...])
        var crc = CRC32C(key)
        crc.update(value)
        let kept = UInt32(littleEndian: stored.loadUnaligned(as: UInt32.self))
        guard crc.value == kept else {
            throw StoreError(
                .corrupt,
                "the `\(db.name)` entry under key \(describe(key)) is damaged: its bytes changed after they were "
                    + "written, and it is not read",
                underlying: CodecError(offset: 0, reason: .checksumMismatch(stored: kept, computed: crc.value)))
        }
        return value
    }

    /// Calls `body` with `value` sealed for `key`: a checksum in front of a copy of its bytes.
    @inline(__always)
    static func withSealed<R>(
        _ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R {
        try withUnsafeTemporaryAllocation(byteCount: StoredChecksum.size + value.count, alignment: 8) { buffer in
            if value.count > 0 {
                (buffer.baseAddress! + StoredChecksum.size).copyMemory(from: value.baseAddress!, byteCount: value.count)
            }
            StoredChecksum.seal(buffer, seed: CRC32C(key))
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// A key for a message: its text when it is printable ASCII (the `meta` names), its bytes in hex otherwise.
    static func describe(_ key: UnsafeRawBufferPointer) -> String {
        if !key.isEmpty, key.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) {
            return "\"\(String(decoding: key, as: UTF8.self))\""
        }
        return key.prefix(32).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            + (key.count > 32 ? "…" : "")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
