fn main() -> std::process::ExitCode {
    meshjob::cli::main()
}
