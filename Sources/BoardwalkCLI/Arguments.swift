import BoardwalkQuery

/// One option a command accepts.
package struct OptionSpec: Hashable, Sendable {
    /// The long name without dashes (`sessions` for `--sessions`).
    package var long: String
    /// The one-letter short name without its dash, if any (`s` for `-s`).
    package var short: Character?
    /// The value's placeholder in help (`N`, `DIR`), or `nil` for a flag that takes no value.
    package var valueName: String?
    /// One line of help.
    package var help: String

    package init(_ long: String, short: Character? = nil, value: String? = nil, help: String) {
        self.long = long
        self.short = short
        self.valueName = value
        self.help = help
    }

    /// Whether the option takes a value.
    package var takesValue: Bool { valueName != nil }

    /// `-s, --sessions N` as shown in help.
    package var synopsis: String {
        var s = short.map { "-\($0), " } ?? "    "
        s += "--\(long)"
        if let valueName { s += " \(valueName)" }
        return s
    }
}

/// What a command line said, once parsed against a command's options.
package struct ParsedArguments: Hashable, Sendable {
    /// Values of options that take one, by long name, in command-line order (an option may repeat).
    package var values: [String: [String]] = [:]
    /// Flags that were given, by long name.
    package var flags: Set<String> = []
    /// Everything else, in order (`-` included; everything after `--`).
    package var positionals: [String] = []

    package init(values: [String: [String]] = [:], flags: Set<String> = [], positionals: [String] = []) {
        self.values = values
        self.flags = flags
        self.positionals = positionals
    }

    /// The last value given for `--name`, if any.
    package func value(_ name: String) -> String? { values[name]?.last }

    /// Whether the flag `--name` was given.
    package func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name` as an integer in `range`, or `nil` when absent.
    /// - Throws: ``UsageError`` when the value is not an integer or is out of range.
    package func integer(_ name: String, in range: ClosedRange<Int> = Int.min...Int.max) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let v = Int(text) else {
            throw UsageError("option '--\(name)' expects an integer, got '\(text)'")
        }
        guard range.contains(v) else {
            throw UsageError("option '--\(name)' must be between \(range.lowerBound) and \(range.upperBound), got \(v)")
        }
        return v
    }

    /// The value of `--name` as an unsigned 64-bit integer (decimal or `0x` hexadecimal), or `nil` when absent.
    package func unsigned(_ name: String) throws(UsageError) -> UInt64? {
        guard let text = value(name) else { return nil }
        let parsed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
        guard let parsed else {
            throw UsageError("option '--\(name)' expects a non-negative integer, got '\(text)'")
        }
        return parsed
    }

    /// The value of `--name`, which must be one of `choices`, or `nil` when absent.
    package func choice(_ name: String, among choices: [String]) throws(UsageError) -> String? {
        guard let text = value(name) else { return nil }
        guard choices.contains(text) else {
            throw UsageError("option '--\(name)' must be one of \(choices.joined(separator: ", ")), got '\(text)'")
        }
        return text
    }
}

/// A mistake in how the tool was invoked: rendered with the command's usage, exit status 64.
package struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, without the `Error: ` prefix.
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// Parses a command's arguments against its options.
///
/// Conventions (those of most Unix tools and swift-argument-parser):
/// - `--name value` and `--name=value` for options with a value; `-n value` and `-nvalue` for short ones.
/// - Flags take no value: `--strict`; short flags combine: `-sv`. `--flag=value` is an error.
/// - `-` alone is a positional argument (standard input); everything after `--` is positional.
/// - An option given twice keeps both values; ``ParsedArguments/value(_:)`` returns the last.
///
/// - Complexity: O(n) in the number of arguments.
package func parseArguments(
    _ arguments: some Sequence<String>,
    options: [OptionSpec]
) throws(UsageError) -> ParsedArguments {
    var result = ParsedArguments()
    var byLong: [String: OptionSpec] = [:]
    var byShort: [Character: OptionSpec] = [:]
    for option in options {
        byLong[option.long] = option
        if let s = option.short { byShort[s] = option }
    }
    var iterator = arguments.makeIterator()
    var onlyPositionals = false

    func record(_ option: OptionSpec, value: String?) {
        if let value { result.values[option.long, default: []].append(value) } else { result.flags.insert(option.long) }
    }

    while let argument = iterator.next() {
        if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
            result.positionals.append(argument)
        } else if argument == "--" {
            onlyPositionals = true
        } else if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            let name: Substring
            let inline: Substring?
            if let eq = body.firstIndex(of: "=") {
                name = body[..<eq]
                inline = body[body.index(after: eq)...]
            } else {
                name = body
                inline = nil
            }
            if name.isEmpty { throw UsageError("'\(argument)' has no option name before '='") }
            guard let option = byLong[String(name)] else {
                // `--fromat` → `--format`: the closest of this command's options, when within a third of the longer
                // name's length (so `--h` or `--=x` suggests nothing rather than `--db`).
                let close = byLong.keys.sorted().map { ($0, editDistance($0, String(name))) }
                    .filter { $0.1 <= max(1, max($0.0.count, name.count) / 3) && $0.1 < name.count }
                    .min { $0.1 < $1.1 }
                throw UsageError("unknown option '--\(name)'" + (close.map { " (did you mean '--\($0.0)'?)" } ?? ""))
            }
            if option.takesValue {
                if let inline {
                    record(option, value: String(inline))
                } else if let next = iterator.next() {
                    record(option, value: next)
                } else {
                    throw UsageError("option '--\(name)' needs a value (\(option.valueName!))")
                }
            } else {
                if inline != nil { throw UsageError("option '--\(name)' takes no value") }
                record(option, value: nil)
            }
        } else {
            // Short options: `-n value`, `-nvalue`, `-n=value`, or a cluster of flags `-sv`.
            var rest = argument.dropFirst()
            while let letter = rest.first {
                rest = rest.dropFirst()
                guard let option = byShort[letter] else {
                    if letter.isNumber, argument.dropFirst().allSatisfy({ $0.isNumber || $0 == "." }) {
                        // A negative number where a positional is expected (`-5`).
                        result.positionals.append(argument)
                        break
                    }
                    // `-f` for `--format`, which has no short form: the one long option starting with the letter.
                    let longs = byLong.keys.filter { $0.first == letter }
                    throw UsageError(
                        "unknown option '-\(letter)'" + (longs.count == 1 ? " (did you mean '--\(longs[0])'?)" : ""))
                }
                if option.takesValue {
                    if rest.first == "=" { rest = rest.dropFirst() }
                    if !rest.isEmpty {
                        record(option, value: String(rest))
                    } else if let next = iterator.next() {
                        record(option, value: next)
                    } else {
                        throw UsageError("option '-\(letter)' needs a value (\(option.valueName!))")
                    }
                    break
                }
                record(option, value: nil)
            }
        }
    }
    return result
}
