import BoardwalkGenerator

/// The generator's data set under its own name for the files of this target that import only `Boardwalk`, which
/// does not re-export the generator.
typealias SyntheticData = BoardwalkGenerator.SyntheticData
