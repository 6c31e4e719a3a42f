# The engine under stress on the real API (readyport-stress --os windows), then the same seeds over
# the fake (--os fake) for comparison, and their figures side by side (ci/side_by_side.ps1). Runs
# the driver ci/windows.ps1 built; builds nothing. On every push (windows.yml, after ctest) and in
# the nightly (stress.yml, long); on a Windows machine, after `pwsh ci/windows.ps1 -Preset P`:
#
#   pwsh ci/windows_stress.ps1                                  # msvc-x64-release, 20 seeds, 120 s
#   pwsh ci/windows_stress.ps1 -Preset msvc-x86 -Seeds 500 -ConnectionsMax 2000 -SecondsMax 3000
#
# It runs, from the repository (OUT is -OutDir, build/stress-windows by default, emptied first):
#   build/<preset>/stress/readyport-stress.exe --os windows --seeds N [--first-seed F]
#       --seconds-max S [--connections-max C] --json OUT/windows.json --bundle-dir OUT/bundles
#       --trace-out OUT/windows.trace                                   (output: OUT/windows.log)
#   build/<preset>/stress/readyport-stress.exe --os fake --seeds N [--first-seed F]
#       --json OUT/fake.json --bundle-dir OUT/bundles-fake                (output: OUT/fake.log)
# The OS schedules the threads of the real run: a seed reproduces its workload and fault plan, not
# its interleaving. A failing seed leaves its bundle (OUT/bundles/seed-<S>.json; replay it with
# ci/replay.ps1) and the recorded trace (OUT/windows.trace), which the same oracle judges on any
# machine: `readyport-stress --check-trace windows.trace` (its header line says it is from real
# threads on Windows).
#
# Exit 77 from --os windows (ProcessSocketNotifications is missing) is a skip on a system older
# than build 20348, and a FAILURE on build 20348 or later (e.g. GitHub's runners), where the call
# exists: there a skip would hide a broken lookup.
#
# The report (the runs' results, the faults fired, the failing seeds with their replay and
# check-trace commands, the end of a failed run's output, then the side-by-side table) goes to
# OUT/summary.md and to the job summary ($env:GITHUB_STEP_SUMMARY, else the output).
# The clang-cl-asan preset is not offered: its binary needs ci/windows.ps1's ASan runtime on PATH.
# Exit status: 0 both runs passed (or the real one was skipped where allowed), 1 a run failed,
# 2 the driver is missing or an argument is bad.
[CmdletBinding()]
param(
  [ValidateSet('msvc-x64-release', 'msvc-x64-debug', 'msvc-x86')]
  [string]$Preset = 'msvc-x64-release',
  [ValidateRange(1, 100000)]
  [int]$Seeds = 20,
  [ValidateRange(1, 86400)]
  [int]$SecondsMax = 120,
  [ValidateRange(0, 1000000)]
  [int]$ConnectionsMax = 0,        # 0: the driver's default
  [ValidatePattern('^[0-9]{0,18}$')]
  [string]$FirstSeed = '',         # empty: the driver's default
  [string]$OutDir = 'build/stress-windows',
  [string]$Title = ''
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version Latest

$root = Split-Path -Parent $PSScriptRoot
Set-Location $root
$driver = Join-Path $root "build/$Preset/stress/readyport-stress.exe"
if (-not (Test-Path -LiteralPath $driver -PathType Leaf)) {
  Write-Host "windows_stress: $driver is missing: build it first (pwsh ci/windows.ps1 -Preset $Preset)"
  exit 2
}
if (Test-Path -LiteralPath $OutDir) { Remove-Item -LiteralPath $OutDir -Recurse -Force }
New-Item -ItemType Directory -Force -Path $OutDir | Out-Null
$out = (Resolve-Path -LiteralPath $OutDir).Path
$leaf = Split-Path -Leaf $out  # the workflows upload OUT beside build/logs: artifact/<leaf>/...
$buildNumber = 0
$key = Get-ItemProperty 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion' -ErrorAction SilentlyContinue
if ($key) { $buildNumber = [int]$key.CurrentBuildNumber }

# Runs the driver with its output copied to LOG; returns its exit code (native stderr is output).
function Invoke-Driver([string]$Log, [string[]]$Arguments) {
  Write-Host "==== readyport-stress $($Arguments -join ' ')"
  $ErrorActionPreference = 'Continue'
  & $driver @Arguments 2>&1 | ForEach-Object { "$_" } | Tee-Object -FilePath $Log | Write-Host
  return $LASTEXITCODE
}

$common = @('--seeds', "$Seeds")
if ($FirstSeed) { $common += @('--first-seed', $FirstSeed) }
$windowsArgs = @('--os', 'windows') + $common + @('--seconds-max', "$SecondsMax")
if ($ConnectionsMax -gt 0) { $windowsArgs += @('--connections-max', "$ConnectionsMax") }
$windowsArgs += @('--json', "$out/windows.json", '--bundle-dir', "$out/bundles", '--trace-out', "$out/windows.trace")
$fakeArgs = @('--os', 'fake') + $common + @('--json', "$out/fake.json", '--bundle-dir', "$out/bundles-fake")

$windowsCode = Invoke-Driver "$out/windows.log" $windowsArgs
$fakeCode = Invoke-Driver "$out/fake.log" $fakeArgs

# The verdict on the real run.
$skipLine = @(Get-Content -LiteralPath "$out/windows.log" -ErrorAction SilentlyContinue | Where-Object { $_ -match '^skipped:' } | Select-Object -First 1)
$skipText = if ($skipLine.Count -gt 0) { $skipLine[0] } else { '(no skipped: line)' }
$windowsFailed = $true
if ($windowsCode -eq 0) {
  $windowsResult = 'passed'; $windowsFailed = $false
} elseif ($windowsCode -eq 77 -and $buildNumber -lt 20348) {
  $windowsResult = "skipped on build $buildNumber (before 20348, no ProcessSocketNotifications): $skipText"; $windowsFailed = $false
} elseif ($windowsCode -eq 77) {
  $windowsResult = "FAILED: skipped (exit 77) on build $buildNumber, where ProcessSocketNotifications exists: $skipText"
} else {
  $windowsResult = "FAILED (exit $windowsCode)"
}
$fakeResult = if ($fakeCode -eq 0) { 'passed' } else { "FAILED (exit $fakeCode)" }

# The named fields of a JSON summary's object, "name N, ..." (at most 40), or "-".
function Format-Counts([string]$File, [string]$Field) {
  try {
    $document = Get-Content -LiteralPath $File -Raw | ConvertFrom-Json
    $property = $document.PSObject.Properties[$Field]
    if ($null -eq $property -or $null -eq $property.Value) { return '-' }
    $value = $property.Value
    if ($value -is [System.Management.Automation.PSCustomObject]) {
      $pairs = @($value.PSObject.Properties | Select-Object -First 40 | ForEach-Object { "$($_.Name) $($_.Value)" })
    } else {
      $pairs = @($value | Select-Object -First 40 | ForEach-Object { "$_" })
    }
    if ($pairs.Count -eq 0) { return 'none' }
    return $pairs -join ', '
  } catch {
    return '-'
  }
}

$commit = if ($env:GITHUB_SHA) { $env:GITHUB_SHA } else { (& git rev-parse HEAD 2>$null) }
$heading = if ($Title) { $Title } else { "Stress on the real API: $Preset, Windows build $buildNumber" }
$lines = @("### $heading", '',
  "- windows: $windowsResult",
  "  (``readyport-stress $($windowsArgs -join ' ')``; the OS schedules the threads: a seed reproduces the workload and the faults, not the interleaving)",
  "- fake, the same seeds: $fakeResult (``readyport-stress $($fakeArgs -join ' ')``)",
  "- faults fired on Windows: $(Format-Counts "$out/windows.json" 'faults_fired')",
  "- coverage rows never reached on Windows: $(Format-Counts "$out/windows.json" 'coverage_zero_rows')")
foreach ($run in @(@{ Name = 'windows'; Dir = 'bundles'; Code = $windowsCode }, @{ Name = 'fake'; Dir = 'bundles-fake'; Code = $fakeCode })) {
  $bundles = @(Get-ChildItem -LiteralPath (Join-Path $out $run.Dir) -Filter 'seed-*.json' -File -ErrorAction SilentlyContinue |
      Sort-Object { [decimal]($_.BaseName -replace '^seed-', '') })
  if ($bundles.Count -gt 0) {
    $first = $bundles[0].Name
    $lines += "- $($run.Name): $($bundles.Count) failing seeds: $(($bundles | Select-Object -First 50 | ForEach-Object { $_.BaseName -replace '^seed-', '' }) -join ', ')"
    $lines += "  - in the artifact (unzipped into ``artifact/``) as ``$leaf/$($run.Dir)/seed-<S>.json``; check out commit ``$commit``, then replay:"
    $lines += "    ``pwsh ci/replay.ps1 artifact/$leaf/$($run.Dir)/$first -Preset $Preset``"
  }
  if ($run.Code -ne 0 -and -not ($run.Name -eq 'windows' -and -not $windowsFailed)) {
    if ($run.Name -eq 'windows') {
      # --trace-out's file, and any trace the driver left beside a bundle.
      $traces = @(Get-ChildItem -LiteralPath $out -Filter '*.trace' -File -Recurse -ErrorAction SilentlyContinue |
          ForEach-Object { "``$leaf/" + [IO.Path]::GetRelativePath($out, $_.FullName).Replace('\', '/') + '`' } | Select-Object -First 20)
      $lines += "- the recorded trace: $(if ($traces.Count -gt 0) { $traces -join ', ' } else { 'none written (see the log)' }) in the artifact;"
      $lines += '  judge it offline on any machine with the same oracle:'
      $lines += "  ``readyport-stress --check-trace artifact/$leaf/windows.trace`` (Linux: ``bash ci/stress.sh --check-trace artifact/$leaf/windows.trace``)"
    }
    $lines += "- the end of the $($run.Name) run's output (``$leaf/$($run.Name).log`` in the artifact):"
    $lines += ''
    $lines += '````text'
    $lines += @(Get-Content -LiteralPath "$out/$($run.Name).log" -Tail 40 -ErrorAction SilentlyContinue)
    $lines += '````'
  }
}
$lines += ''
Set-Content -LiteralPath "$out/summary.md" -Value $lines -Encoding utf8
if ($env:GITHUB_STEP_SUMMARY) { Add-Content -LiteralPath $env:GITHUB_STEP_SUMMARY -Value $lines -Encoding utf8 } else { $lines | Write-Host }

try {
  & (Join-Path $PSScriptRoot 'side_by_side.ps1') -Title "The same figures, side by side ($Seeds seeds)" "fake=$out/fake.json" "windows=$out/windows.json"
} catch {
  Write-Host "windows_stress: the side-by-side table failed: $_"  # a report, not the verdict
}

if ($windowsFailed -or $fakeCode -ne 0) { exit 1 }
exit 0
