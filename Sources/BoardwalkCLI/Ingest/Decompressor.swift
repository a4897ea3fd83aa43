internal import CZlib
internal import CZstd

/// A compressed input `ingest` reads through: gzip (zlib) or zstd, told by the magic bytes it starts with.
enum Compression: Sendable {
    case gzip, zstd

    /// gzip's two magic bytes (RFC 1952).
    static let gzipMagic: [UInt8] = [0x1F, 0x8B]
    /// A zstd frame's four magic bytes (RFC 8878).
    static let zstdMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    /// The most bytes ``detect(_:)`` needs to look at.
    static let magicLength = 4

    /// The compression `head` (a stream's first bytes) starts with; `nil` for anything else. A head shorter than
    /// ``magicLength`` that is a prefix of a magic is not enough to tell (``couldStart(_:)``).
    static func detect(_ head: some Collection<UInt8>) -> Compression? {
        if head.starts(with: gzipMagic) { return .gzip }
        if head.starts(with: zstdMagic) { return .zstd }
        return nil
    }

    /// Whether `head`, shorter than a magic, could still become one: more bytes are needed to tell.
    static func couldStart(_ head: some Collection<UInt8>) -> Bool {
        head.count < magicLength && (gzipMagic.starts(with: head) || zstdMagic.starts(with: head))
    }

    var name: String {
        switch self {
        case .gzip: "gzip"
        case .zstd: "zstd"
        }
    }

    /// A decompressor for this format.
    func decompressor(input: String) throws(RuntimeError) -> any Decompressor {
        switch self {
        case .gzip: try GzipDecompressor(input: input)
        case .zstd: try ZstdDecompressor(input: input)
        }
    }
}

/// Turns a compressed stream into its bytes, a piece at a time.
protocol Decompressor: AnyObject {
    /// Decompresses from `input` into `output`: how many bytes of `input` it took and how many it wrote. Either may
    /// be 0 while the other is not. With `input` empty it writes what it still holds (output that did not fit the
    /// last `output`), if anything.
    /// - Throws: ``RuntimeError`` naming the input when the data is not valid.
    func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RuntimeError)
        -> (consumed: Int, produced: Int)
    /// Called at the end of the input: throws when it ended inside a compressed stream (a file cut short).
    func finish() throws(RuntimeError)
}

/// gzip through zlib's `inflate` (the gzip wrapper only: `windowBits` 15 + 16). Members written one after another
/// (`cat a.gz b.gz`) are read in turn, as `gunzip` reads them.
final class GzipDecompressor: Decompressor {
    private let input: String
    /// zlib keeps a pointer to its stream: it must not move.
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    /// Whether the last member ended exactly where the input read so far did.
    private var atMemberEnd = true

    init(input: String) throws(RuntimeError) {
        self.input = input
        stream.initialize(to: z_stream())
        let rc = inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else {
            stream.deallocate()
            throw RuntimeError("cannot read '\(input)': zlib could not start (error \(rc))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    func decompress(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RuntimeError)
        -> (consumed: Int, produced: Int)
    {
        guard !output.isEmpty, let base = bytes.baseAddress else { return (0, 0) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(min(bytes.count, Int(UInt32.max)))
        stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(min(output.count, Int(UInt32.max)))
        let availIn = Int(stream.pointee.avail_in), availOut = Int(stream.pointee.avail_out)
        let rc = inflate(stream, Z_NO_FLUSH)
        let consumed = availIn - Int(stream.pointee.avail_in)
        let produced = availOut - Int(stream.pointee.avail_out)
        switch rc {
        case Z_OK:
            atMemberEnd = false
        case Z_BUF_ERROR:
            break  // no progress was possible: nothing new to read, nothing held
        case Z_STREAM_END:
            // The next member, if any, starts a fresh stream.
            atMemberEnd = true
            inflateReset(stream)
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "error \(rc)"
            throw RuntimeError("cannot read '\(input)': it is not valid gzip data (\(message))")
        }
        return (consumed, produced)
    }

    func finish() throws(RuntimeError) {
        if !atMemberEnd {
            throw RuntimeError(
                "cannot read '\(input)': its gzip data ends in the middle of a stream (a file cut short?)")
        }
    }
}

/// zstd through libzstd's streaming decompression; frames one after another are read in turn.
final class ZstdDecompressor: Decompressor {
    private let input: String
    private let stream: OpaquePointer
    /// libzstd's last answer: 0 when a frame has just ended.
    private var pending = 0

    init(input: String) throws(RuntimeError) {
        self.input = input
        guard let stream = ZSTD_createDStream() else {
            throw RuntimeError("cannot read '\(input)': zstd could not start (out of memory)")
        }
        self.stream = stream
        ZSTD_initDStream(stream)
    }

    deinit { ZSTD_freeDStream(stream) }

    func decompress(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(RuntimeError)
        -> (consumed: Int, produced: Int)
    {
        guard !output.isEmpty else { return (0, 0) }
        var source = ZSTD_inBuffer(src: bytes.baseAddress, size: bytes.count, pos: 0)
        var destination = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let rc = ZSTD_decompressStream(stream, &destination, &source)
        if ZSTD_isError(rc) != 0 {
            throw RuntimeError(
                "cannot read '\(input)': it is not valid zstd data (\(String(cString: ZSTD_getErrorName(rc))))")
        }
        // A call with nothing to do (no input left, nothing held) says how much the next frame's header needs.
        if source.pos > 0 || destination.pos > 0 { pending = rc }
        return (source.pos, destination.pos)
    }

    func finish() throws(RuntimeError) {
        if pending != 0 {
            throw RuntimeError(
                "cannot read '\(input)': its zstd data ends in the middle of a frame (a file cut short?)")
        }
    }
}
