# The Windows leg (GitHub's windows-2022 / windows-2025 runners, or any Windows machine with
# Visual Studio 2022 and its C++ workload): configure, build and test one CMake preset with the
# real WindowsOs, so the real-API tests (ProcessSocketNotifications, Windows 10 build 20348 and
# later) and the conformance scenarios against Windows run for real.
#
#   pwsh ci/windows.ps1 -Preset msvc-x64-debug     # or msvc-x64-release, msvc-x86, clang-cl-asan
#
# - Enters a Visual Studio developer environment for the preset's architecture (vswhere +
#   Microsoft.VisualStudio.DevShell), so cl / clang-cl, the SDK, CMake and Ninja are on PATH.
# - Dependencies (GoogleTest, RapidCheck, Benchmark) come from FetchContent pinned to commits
#   (READYPORT_FETCH_DEPS=ON in the presets).
# - clang-cl-asan: asks clang-cl which AddressSanitizer runtime libraries it would link and
#   passes them to the linker (CMake links with lld-link/link directly, which does not add them),
#   and puts the runtime DLL's directory on PATH for the tests.
# - Logs: build/logs/<preset>.{configure,build,ctest}.log; ctest's own files under
#   build/<preset>/Testing; JUnit XML in build/logs/<preset>.junit.xml (ctest keeps up to 1 MiB
#   of a passing test's output there, not its default 1 KiB, so the real-API property's lines
#   survive); a failing stress test's failure bundles (seed-<S>.json) under build/<preset>/stress.
#   The workflow uploads the JUnit file always and the rest when a step fails. Replay a bundle:
#   pwsh ci/replay.ps1 (docs/ci.md).
# - After ctest, passed or not: the test counts, the failed tests' names and every
#   `observed: <question> = <reading>` line of the real-API property (PsnWindowsProperty, what
#   Windows answered to docs/rules.md's open questions), read from the JUnit file, go to
#   build/logs/<preset>.summary.md and to the job summary ($env:GITHUB_STEP_SUMMARY, when set).
# - -Target NAME builds that target only and runs no test (the nightly job builds readyport-stress
#   this way; ci/windows_stress.ps1 then runs it).
# Exit status: non-zero when configure, build or any test fails.
[CmdletBinding()]
param(
  [Parameter(Mandatory = $true)]
  [ValidateSet('msvc-x64-debug', 'msvc-x64-release', 'msvc-x86', 'clang-cl-asan')]
  [string]$Preset,
  [int]$Jobs = [Environment]::ProcessorCount,
  [string]$Target = ''
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version Latest

$root = Split-Path -Parent $PSScriptRoot
Set-Location $root
$logDir = Join-Path $root 'build/logs'
New-Item -ItemType Directory -Force -Path $logDir | Out-Null

# Runs a native command, copies its output to a log file, and stops on a non-zero exit code.
# (Native stderr lines are plain output here, never errors: the exit code decides.)
function Invoke-Logged([string]$Step, [string]$Log, [string]$Exe, [string[]]$Arguments) {
  Write-Host "==== $Preset`: $Step"
  $ErrorActionPreference = 'Continue'
  & $Exe @Arguments 2>&1 | ForEach-Object { "$_" } | Tee-Object -FilePath $Log
  $code = $LASTEXITCODE
  if ($code -ne 0) { throw "$Step failed with exit code $code (log: $Log)" }
}

# ---- The developer environment --------------------------------------------------------------
$vswhere = Join-Path ${env:ProgramFiles(x86)} 'Microsoft Visual Studio\Installer\vswhere.exe'
if (-not (Test-Path $vswhere)) { throw "vswhere.exe not found: install Visual Studio 2022 with the C++ workload" }
$vsPath = & $vswhere -latest -products * -requires Microsoft.VisualStudio.Component.VC.Tools.x86.x64 -property installationPath
if (-not $vsPath) { throw 'no Visual Studio installation with the C++ x86/x64 tools found' }
$arch = if ($Preset -eq 'msvc-x86') { 'x86' } else { 'amd64' }
Import-Module (Join-Path $vsPath 'Common7\Tools\Microsoft.VisualStudio.DevShell.dll')
Enter-VsDevShell -VsInstallPath $vsPath -SkipAutomaticLocation -DevCmdArguments "-arch=$arch -host_arch=amd64 -no_logo" | Out-Null
Set-Location $root
Write-Host "Visual Studio: $vsPath (target $arch)"

$configureArgs = @('--preset', $Preset)
if ($Preset -eq 'clang-cl-asan') {
  # What clang-cl would pass to the linker for an /MD AddressSanitizer program: the -### dry run
  # prints the link line without running it. Keep the ASan runtime libraries, their directory,
  # and the symbols ASan needs included.
  $probe = Join-Path $logDir 'asan_probe.cpp'
  Set-Content -Path $probe -Value 'int main() { return 0; }'
  $ErrorActionPreference = 'Continue'  # -### prints on stderr
  $dryRun = (& clang-cl -fsanitize=address /MD -### $probe 2>&1 | ForEach-Object { "$_" }) -join "`n"
  $ErrorActionPreference = 'Stop'
  $linkLine = ($dryRun -split "`n" | Where-Object { $_ -match 'link(\.exe)?"' } | Select-Object -Last 1)
  if (-not $linkLine) { throw "cannot read clang-cl's link line:`n$dryRun" }
  $linkArgs = [regex]::Matches($linkLine, '"((?:[^"\\]|\\.)*)"') | ForEach-Object { $_.Groups[1].Value -replace '\\\\', '\' -replace '\\"', '"' }
  $asanArgs = @($linkArgs | Where-Object { $_ -match 'clang_rt\.asan|__asan|^-libpath:' })
  if ($asanArgs.Count -eq 0) { throw "no AddressSanitizer libraries in clang-cl's link line:`n$linkLine" }
  $linkerFlags = ($asanArgs | ForEach-Object { '"' + ($_ -replace '\\', '/') + '"' }) -join ' '
  Write-Host "ASan link flags: $linkerFlags"
  $configureArgs += "-DCMAKE_EXE_LINKER_FLAGS=$linkerFlags"
  # The runtime DLL (clang_rt.asan_dynamic-x86_64.dll) sits beside the import libraries.
  $resourceDir = (& clang-cl /clang:-print-resource-dir | Select-Object -First 1).Trim()
  $env:PATH = (Join-Path $resourceDir 'lib\windows') + ';' + $env:PATH
}

# The Markdown summary of one ctest run from its JUnit file: counts, failed tests (at most 50),
# and the real-API property's `observed:` lines (at most 100), for build/logs/<preset>.summary.md
# and the job summary. Never throws: a missing or unreadable file is said in the summary.
function Write-CtestSummary([string]$Junit) {
  $build = (Get-ItemProperty 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion' -ErrorAction SilentlyContinue)
  $system = if ($build) { "Windows build $($build.CurrentBuildNumber)" } else { 'Windows' }
  $lines = @("### ctest $Preset ($system)", '')
  try {
    [xml]$xml = Get-Content -LiteralPath $Junit -Raw
    $suite = $xml.DocumentElement
    $cases = @($suite.SelectNodes('testcase'))
    $failed = @($cases | Where-Object { $null -ne $_.SelectSingleNode('failure') } | ForEach-Object { $_.GetAttribute('name') })
    $skipped = @($cases | Where-Object { $null -ne $_.SelectSingleNode('skipped') }).Count
    $lines += "$($cases.Count - $failed.Count - $skipped) passed, $($failed.Count) failed, $skipped skipped ($($cases.Count) tests)"
    $lines += ''
    if ($failed.Count -gt 0) {
      $lines += 'Failed tests (their output is in the job log and the JUnit artifact):'
      $lines += ''
      $lines += @($failed | Select-Object -First 50 | ForEach-Object { "- $_" })
      $lines += ''
    }
    $observed = @($cases | Where-Object { $_.GetAttribute('name') -like '*PsnWindowsProperty*' } | ForEach-Object {
        $name = $_.GetAttribute('name')
        $out = $_.SelectSingleNode('system-out')
        if ($out) { $out.InnerText -split "`r?`n" | Where-Object { $_ -match '^\s*observed: ' } | ForEach-Object { "$name`: $($_.Trim())" } }
      } | Select-Object -First 100)
    $lines += 'What Windows answered to the open questions of docs/rules.md (PsnWindowsProperty, the real-API property):'
    $lines += ''
    if ($observed.Count -gt 0) {
      $lines += '```text'
      $lines += $observed
      $lines += '```'
    } else {
      $lines += 'no `observed:` line (the suite was skipped, not built or failed before the end: see the JUnit artifact)'
    }
  } catch {
    $lines += "no test results: $Junit cannot be read ($($_.Exception.Message))"
  }
  $lines += ''
  Set-Content -LiteralPath (Join-Path $logDir "$Preset.summary.md") -Value $lines -Encoding utf8
  if ($env:GITHUB_STEP_SUMMARY) { Add-Content -LiteralPath $env:GITHUB_STEP_SUMMARY -Value $lines -Encoding utf8 }
}

Invoke-Logged 'configure' (Join-Path $logDir "$Preset.configure.log") 'cmake' $configureArgs
if ($Target) {
  Invoke-Logged "build ($Target)" (Join-Path $logDir "$Preset.build.log") 'cmake' @('--build', '--preset', $Preset, '-j', "$Jobs", '--target', $Target)
  exit 0
}
Invoke-Logged 'build' (Join-Path $logDir "$Preset.build.log") 'cmake' @('--build', '--preset', $Preset, '-j', "$Jobs")
$junit = Join-Path $logDir "$Preset.junit.xml"
Remove-Item -LiteralPath $junit -Force -ErrorAction SilentlyContinue
try {
  Invoke-Logged 'ctest' (Join-Path $logDir "$Preset.ctest.log") 'ctest' @('--preset', $Preset, '-j', "$Jobs", '--output-on-failure',
    '--test-output-size-passed', '1048576', '--output-junit', $junit)
} finally {
  Write-CtestSummary $junit
}
