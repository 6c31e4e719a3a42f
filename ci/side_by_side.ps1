# The same figures side by side, in PowerShell for the Windows runners (no jq there): the twin of
# ci/side_by_side.sh (same arguments, same table; keep the two in step). From readyport-stress JSON
# summaries (`--json FILE`), one Markdown table with a row per figure and a column per run,
# appended to $env:GITHUB_STEP_SUMMARY (written to the output when that is unset).
#
#   pwsh ci/side_by_side.ps1 fake=build/stress-windows/fake.json windows=build/stress-windows/windows.json
#   pwsh ci/side_by_side.ps1 -Title 'Nightly' build/a.json build/b.json
#
# A column is headed LABEL, else the summary's "os", else the file's name. Rows: seeds run
# (failed), notifications, port calls, port calls per notification (three decimals), REMOVE OR-ed
# into another packet, REMOVE in a packet of its own, stale packets. A figure the summary lacks
# shows "-"; a missing or unreadable file gives a column of "-" and a note, never a failure.
# Limits: at most 8 columns. Exit status: 0, or 2 on bad arguments.
[CmdletBinding(PositionalBinding = $false)]
param(
  [string]$Title = 'The same figures, side by side',
  [Parameter(ValueFromRemainingArguments = $true)]
  [string[]]$Summaries = @()
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version Latest
$columnsMax = 8
$invariant = [Globalization.CultureInfo]::InvariantCulture

if ($Summaries.Count -lt 1 -or $Summaries.Count -gt $columnsMax) {
  Write-Host "side_by_side: usage: side_by_side.ps1 [-Title TEXT] [LABEL=]FILE... (1 to $columnsMax files)"
  exit 2
}

# The value at a path of property names, or $null where any is missing (StrictMode forbids
# reading a missing property directly).
function Get-Field($Object, [string[]]$Path) {
  foreach ($name in $Path) {
    if ($null -eq $Object -or $Object -isnot [System.Management.Automation.PSCustomObject]) { return $null }
    $property = $Object.PSObject.Properties[$name]
    if ($null -eq $property) { return $null }
    $Object = $property.Value
  }
  return $Object
}

function Test-Number($Value) {
  return $Value -is [int] -or $Value -is [long] -or $Value -is [double] -or $Value -is [decimal] -or
    $Value -is [System.Numerics.BigInteger]
}

# A figure as the bash twin prints it: integers as they are, other numbers with three decimals
# (rounded half away from zero, as jq's round), anything else "-".
function Format-Cell($Value, [switch]$Fixed3) {
  if (-not (Test-Number $Value)) { return '-' }
  $number = [double]$Value
  if (-not $Fixed3 -and $number -eq [math]::Floor($number)) { return ([decimal]$Value).ToString($invariant) }
  return ([math]::Round($number * 1000, [MidpointRounding]::AwayFromZero) / 1000).ToString('0.000', $invariant)
}

$labels = @()
$columns = @()
$notes = @()
foreach ($argument in $Summaries) {
  $label = ''
  $file = $argument
  $equals = $argument.IndexOf('=')
  if ($equals -ge 0) {
    $label = $argument.Substring(0, $equals)
    $file = $argument.Substring($equals + 1)
  }
  if (-not $file) { Write-Host "side_by_side: an empty file name in '$argument'"; exit 2 }
  $document = $null
  if (Test-Path -LiteralPath $file -PathType Leaf) {
    try { $document = Get-Content -LiteralPath $file -Raw | ConvertFrom-Json } catch { $document = $null }
    if ($document -isnot [System.Management.Automation.PSCustomObject]) {
      $notes += "$(if ($label) { $label } else { $file }): ``$file`` is not a readyport-stress JSON summary"
      $document = $null
    }
  } else {
    $notes += "$(if ($label) { $label } else { $file }): no summary (``$file`` is missing: the run was skipped or ended before writing it)"
  }
  $os = Get-Field $document @('os')
  if (-not $label) { $label = if ($os) { "$os" } else { Split-Path -Leaf $file } }
  $labels += $label
  $columns += , @(
    "$(Format-Cell (Get-Field $document @('seeds_run'))) ($(Format-Cell (Get-Field $document @('failed'))))",
    (Format-Cell (Get-Field $document @('figures', 'notifications'))),
    (Format-Cell (Get-Field $document @('figures', 'port_calls'))),
    (Format-Cell (Get-Field $document @('figures', 'port_calls_per_notification')) -Fixed3),
    (Format-Cell (Get-Field $document @('figures', 'remove_ored_with_in'))),
    (Format-Cell (Get-Field $document @('figures', 'remove_separate'))),
    (Format-Cell (Get-Field $document @('figures', 'stale_packets'))))
}

$rowNames = @('seeds run (failed)', 'notifications', 'port calls', 'port calls per notification',
  'REMOVE OR-ed into another packet', 'REMOVE in a packet of its own', 'stale packets')
$lines = @("### $Title", '', ('| figure | ' + ($labels -join ' | ') + ' |'), ('|---|' + ('---:|' * $labels.Count)))
for ($row = 0; $row -lt $rowNames.Count; $row++) {
  $lines += '| ' + $rowNames[$row] + ' | ' + (($columns | ForEach-Object { $_[$row] }) -join ' | ') + ' |'
}
$lines += ''
if ($notes.Count -gt 0) { $lines += ($notes | ForEach-Object { "- $_" }); $lines += '' }

if ($env:GITHUB_STEP_SUMMARY) {
  Add-Content -LiteralPath $env:GITHUB_STEP_SUMMARY -Value $lines -Encoding utf8
} else {
  $lines | Write-Output
}
exit 0
