# Replays one failure bundle (the JSON file readyport-stress writes for each failing seed) on
# Windows with the driver already built by ci/windows.ps1: nothing is installed, and nothing but
# the driver is built. The PowerShell equivalent of ci/replay.sh.
#
# From a PowerShell prompt in the repository (or `pwsh ci/replay.ps1 ...` from any shell):
#   ./ci/replay.ps1 seed-93.json                              # preset msvc-x64-release
#   ./ci/replay.ps1 seed-93.json -Preset msvc-x64-debug
#   ./ci/replay.ps1 seed-93.json -Build                       # bring the driver up to date
#   ./ci/replay.ps1 seed-93.json -DriverArgs '--trace-out','seed-93.trace'   # to the driver
#
# Runs build\<preset>\stress\readyport-stress.exe --replay BUNDLE (the presets' binaryDir is
# build/<preset>, their generator single-configuration Ninja). When that binary is missing, or
# with -Build, enters a Visual Studio developer environment (as ci/windows.ps1 does), configures
# the preset when its tree has no cache yet and builds only the target readyport-stress (logs:
# build\logs\replay.<preset>.{configure,build}.log; needs Visual Studio 2022 with the C++
# workload and network access for the FetchContent dependencies on the first configure).
# clang-cl-asan is not offered: its binary needs ci/windows.ps1's ASan link flags and runtime.
# The driver runs in the caller's directory (relative paths in its options are the caller's).
# When the bundle names another commit or canary than the binary's --version, it prints the
# commands that make the matching build (a git worktree of that commit, with the canary's patch
# ci/canaries/<name>.patch applied when the commit has one), then replays on this binary with a
# warning (ci/replay.sh makes that build itself).
# Exit status: the driver's: 0 the same verdict and trace hash as recorded, 3 the same verdict
# with another trace, 4 not reproduced (it passes now, or fails another way); a corpus entry: 0 it
# passes, 1 it fails; 2 a bad bundle or option, or a binary that cannot be built.
[CmdletBinding(PositionalBinding = $false)]
param(
  [Parameter(Mandatory = $true, Position = 0)]
  [string]$Bundle,
  [ValidateSet('msvc-x64-release', 'msvc-x64-debug', 'msvc-x86')]
  [string]$Preset = 'msvc-x64-release',
  [switch]$Build,
  [Parameter(ValueFromRemainingArguments = $true)]
  [string[]]$DriverArgs = @()
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version Latest

if (-not (Test-Path -LiteralPath $Bundle -PathType Leaf)) {
  Write-Host "replay: no such bundle file: $Bundle"
  exit 2
}
$bundlePath = (Resolve-Path -LiteralPath $Bundle).Path
$callerDir = (Get-Location).Path  # the driver runs here: relative paths in its options are the caller's
$root = Split-Path -Parent $PSScriptRoot
$logDir = Join-Path $root 'build/logs'
$binary = Join-Path $root "build/$Preset/stress/readyport-stress.exe"

# Builds readyport-stress for the preset in a Visual Studio developer environment; returns $true
# on success, else prints why and returns $false.
function Build-Driver {
  $vswhere = Join-Path ${env:ProgramFiles(x86)} 'Microsoft Visual Studio\Installer\vswhere.exe'
  if (-not (Test-Path $vswhere)) {
    Write-Host "replay: $binary must be built, and vswhere.exe is missing: install Visual Studio 2022 with the C++ workload"
    return $false
  }
  $vsPath = & $vswhere -latest -products * -requires Microsoft.VisualStudio.Component.VC.Tools.x86.x64 -property installationPath
  if (-not $vsPath) {
    Write-Host 'replay: no Visual Studio installation with the C++ x86/x64 tools found'
    return $false
  }
  $arch = if ($Preset -eq 'msvc-x86') { 'x86' } else { 'amd64' }
  Import-Module (Join-Path $vsPath 'Common7\Tools\Microsoft.VisualStudio.DevShell.dll')
  Enter-VsDevShell -VsInstallPath $vsPath -SkipAutomaticLocation -DevCmdArguments "-arch=$arch -host_arch=amd64 -no_logo" | Out-Null
  Set-Location $root
  New-Item -ItemType Directory -Force -Path $logDir | Out-Null
  $ErrorActionPreference = 'Continue'  # native stderr is output here; the exit code decides
  if (-not (Test-Path (Join-Path $root "build/$Preset/CMakeCache.txt"))) {
    $log = Join-Path $logDir "replay.$Preset.configure.log"
    Write-Host "replay: configuring build/$Preset (preset $Preset)"
    & cmake --preset $Preset 2>&1 | ForEach-Object { "$_" } | Set-Content -Path $log
    if ($LASTEXITCODE -ne 0) {
      Get-Content -Path $log -Tail 40 | Write-Host
      Write-Host "replay: configuring failed (log: $log)"
      return $false
    }
  }
  $log = Join-Path $logDir "replay.$Preset.build.log"
  Write-Host "replay: building readyport-stress (build/$Preset)"
  & cmake --build --preset $Preset --target readyport-stress 2>&1 | ForEach-Object { "$_" } | Set-Content -Path $log
  if ($LASTEXITCODE -ne 0) {
    Get-Content -Path $log -Tail 60 | Write-Host
    Write-Host "replay: the build failed (log: $log)"
    return $false
  }
  return $true
}

if ($Build -or -not (Test-Path -LiteralPath $binary -PathType Leaf)) {
  if (-not (Build-Driver)) { exit 2 }
  Set-Location $callerDir
}
# The build that wrote the bundle (its "readyport" object): when this binary is another commit or
# canary, say exactly how to get the matching one (ci/replay.sh builds it; here it is printed).
$doc = Get-Content -Raw -LiteralPath $bundlePath | ConvertFrom-Json
if ($doc.PSObject.Properties.Name -contains 'readyport') {
  $wantCommit = [string]$doc.readyport.commit
  $wantCanary = [string]$doc.readyport.canary
  if ([string]$doc.readyport.tree -eq 'dirty') {
    Write-Host "replay: WARNING: the bundle was written by a build with uncommitted changes to $wantCommit`: the commit alone may not reproduce it"
  }
  $version = [string](& $binary --version)
  $commitOk = ($wantCommit -eq 'unknown') -or $version.Contains("commit $wantCommit")
  $canaryOk = if ($wantCanary) { $version.Contains("canary $wantCanary") } else { -not $version.Contains(', canary ') }
  if (-not ($commitOk -and $canaryOk)) {
    $suffix = $(if ($wantCanary) { "-$wantCanary" } else { '' })
    $dir = "build/replay-$wantCommit$suffix"
    $src = "build/replay-src-$wantCommit$suffix"
    Write-Host "replay: WARNING: the bundle was written at commit $wantCommit$(if ($wantCanary) { ", canary $wantCanary" }); this binary is: $version"
    Write-Host 'replay: a matching build, from the repository (a Visual Studio developer prompt):'
    Write-Host "  git worktree add --detach $src $wantCommit"
    if ($wantCanary) {
      Write-Host "  git -C $src apply ci/canaries/$wantCanary.patch   # a commit without that file planted it with -DREADYPORT_CANARY alone"
    }
    Write-Host "  cd $src; cmake --preset $Preset -B ../../$dir -DREADYPORT_CANARY=$wantCanary; cmake --build ../../$dir --target readyport-stress; cd ../.."
    Write-Host "  $dir\stress\readyport-stress.exe --replay $bundlePath"
    Write-Host 'replay: replaying on this binary meanwhile (the verdict may differ)'
  }
}
Write-Host "replay: $binary --replay $bundlePath $($DriverArgs -join ' ')"
& $binary --replay $bundlePath @DriverArgs
exit $LASTEXITCODE
