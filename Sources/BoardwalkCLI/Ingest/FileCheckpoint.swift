/// Where an input got to: stored with the batch that got it there.
///
/// Two fingerprints tie it to the bytes it counted: the file's first bytes, and the bytes just before
/// ``offset``. A log that grows keeps both (the bytes before the offset stay as they were); a different file that
/// reuses the inode changes the first, and a file rewritten in place (`generate … > same.ndjson`) whose start is
/// unchanged but whose lines before the offset differ changes the second. Either way the file is read from its
/// start.
struct FileCheckpoint: Hashable {
    /// Byte offset after the last committed line; for a batch file, the file's size (0 in checkpoints written
    /// before the tail fingerprint existed).
    var offset: Int
    /// Lines (or, for batch files, events) committed so far.
    var line: Int
    /// FNV-1a of the file's first `min(offset, 4096)` bytes (of a batch file: its first 4 KiB).
    var fingerprint: UInt64
    /// FNV-1a of the up to 4 KiB that end at ``offset`` (of a batch file: its last 4 KiB). `nil` in the older
    /// 24-byte checkpoints, which have none: those are trusted on ``fingerprint`` alone, as they were when written,
    /// and the next batch committed replaces them with one that has it.
    var tail: UInt64?

    static let fingerprintBytes = 4096

    init(offset: Int, line: Int, fingerprint: UInt64, tail: UInt64? = nil) {
        self.offset = offset
        self.line = line
        self.fingerprint = fingerprint
        self.tail = tail
    }

    /// Whether this checkpoint was written for `input` as it is now: the file reaches ``offset``, and the
    /// fingerprinted bytes are the same.
    /// - Parameter batchFile: whether the checkpoint is a batch file's (whose ``offset`` is the file's size).
    func fits(_ input: InputFile, batchFile: Bool = false) -> Bool {
        let size = input.size ?? 0
        if batchFile {
            guard fingerprint == FileCheckpoint.fingerprint(input.prefix(FileCheckpoint.fingerprintBytes)) else {
                return false
            }
            guard let tail else { return true }
            return offset == size
                && tail
                    == FileCheckpoint.fingerprint(
                        input.bytes(in: max(0, size - FileCheckpoint.fingerprintBytes)..<size))
        }
        let window = min(offset, FileCheckpoint.fingerprintBytes)
        return fits(
            size: size, head: input.prefix(window), before: input.bytes(in: (offset - window)..<offset))
    }

    /// Whether this checkpoint of an NDJSON file fits a file of `size` bytes whose first `min(offset, 4 KiB)`
    /// bytes are `head` and whose up to 4 KiB before ``offset`` are `before` (fewer bytes than that: it does not).
    func fits(size: Int, head: [UInt8], before: [UInt8]) -> Bool {
        let window = min(offset, FileCheckpoint.fingerprintBytes)
        guard offset <= size, head.count == window, before.count == window,
            fingerprint == FileCheckpoint.fingerprint(head)
        else { return false }
        guard let tail else { return true }
        return tail == FileCheckpoint.fingerprint(before)
    }

    /// Decodes ``bytes`` (32 bytes; the 24 of a checkpoint without ``tail`` too); `nil` for anything else.
    init?(_ bytes: [UInt8]) {
        guard bytes.count == 24 || bytes.count == 32 else { return nil }
        func word(_ i: Int) -> UInt64 { (0..<8).reduce(0) { $0 << 8 | UInt64(bytes[i * 8 + $1]) } }
        offset = Int(truncatingIfNeeded: word(0))
        line = Int(truncatingIfNeeded: word(1))
        fingerprint = word(2)
        tail = bytes.count == 32 ? word(3) : nil
        guard offset >= 0, line >= 0 else { return nil }
    }

    /// Big-endian 64-bit words: offset, line, fingerprint, and the tail fingerprint when there is one.
    var bytes: [UInt8] {
        ([UInt64(offset), UInt64(line), fingerprint] + (tail.map { [$0] } ?? []))
            .flatMap { w in (0..<8).map { UInt8(truncatingIfNeeded: w >> (56 - 8 * $0)) } }
    }

    /// FNV-1a's offset basis: the fingerprint of no bytes.
    static let fingerprintBasis: UInt64 = 0xCBF2_9CE4_8422_2325

    /// FNV-1a of `bytes`; with `continuing`, of the bytes that gave that fingerprint followed by `bytes`.
    static func fingerprint(_ bytes: some Collection<UInt8>, continuing basis: UInt64 = fingerprintBasis) -> UInt64 {
        var h = basis
        for b in bytes {
            h ^= UInt64(b)
            h &*= 0x100_0000_01B3
        }
        return h
    }
}
