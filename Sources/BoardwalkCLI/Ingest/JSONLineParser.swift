import Boardwalk

/// The JSON layer's reader as the ingest loop's parser.
struct JSONLineParser: LineParser {
    let reader: EventReader
    init() throws {
        do {
            reader = try EventReader()
        } catch {
            throw RuntimeError("\(error)")
        }
    }
    mutating func parse(_ line: UnsafeRawBufferPointer, readableAfter: Int, lineNumber: Int, arrival: Timestamp) throws
        -> Event
    {
        try reader.read(line: line, readableAfter: readableAfter, lineNumber: lineNumber, arrival: arrival)
    }
}
