; Hearth's Windows installer (NSIS 3, Modern UI 2).
;
; Built by installers/windows/build_windows.py, or by hand:
;
;   makensis -WX -DPAYLOAD=dist\hearth -DOUTFILE=dist\Hearth-0.1.0-setup.exe -DVERSION=0.1.0 ^
;            -DICON=resources\icons\hearth.ico installers\windows\hearth.nsi
;
; PAYLOAD is the folder installers/freeze.py makes (hearth.exe, hearth-runner.exe, _internal\,
; runtimes\); the installer copies all of it, whatever it holds, so this script does not change
; when the bundle gains a file.
;
; A per-user install: no administrator rights, no UAC prompt, nothing outside the user's own
; profile and registry hive. The program goes to %LOCALAPPDATA%\Programs\Hearth (where Windows
; puts per-user programs). The user's data is elsewhere, in %LOCALAPPDATA%\Hearth (platformdirs,
; app/paths.py): models, conversations, settings and logs. Neither an update nor the uninstaller
; touches that folder, so removing or reinstalling Hearth never loses a download or a chat.

Unicode true
; Crisp text on high-DPI screens instead of a blurry bitmap-scaled window.
ManifestDPIAware true
; Solid LZMA: the payload is mostly DLLs, which compress far better as one stream.
SetCompressor /SOLID lzma
RequestExecutionLevel user

; ---------------------------------------------------------------------------------------------
; Defines from the command line: a missing one is a build error, not an installer that half works.

!ifndef PAYLOAD
  !error "PAYLOAD is not defined: pass -DPAYLOAD=<folder made by installers/freeze.py, e.g. dist\hearth>"
!endif
!ifndef OUTFILE
  !error "OUTFILE is not defined: pass -DOUTFILE=<setup program to write, e.g. dist\Hearth-0.1.0-setup.exe>"
!endif
!ifndef VERSION
  !error "VERSION is not defined: pass -DVERSION=<version from pyproject.toml, e.g. 0.1.0>"
!endif
!ifndef ICON
  !error "ICON is not defined: pass -DICON=<path to resources\icons\hearth.ico>"
!endif
; Catch a wrong PAYLOAD here rather than shipping an installer of an empty or unrelated folder.
!if ! /FileExists "${PAYLOAD}\hearth.exe"
  !error "PAYLOAD (${PAYLOAD}) has no hearth.exe: run installers/freeze.py first"
!endif
!if ! /FileExists "${PAYLOAD}\hearth-runner.exe"
  !error "PAYLOAD (${PAYLOAD}) has no hearth-runner.exe: run installers/freeze.py first"
!endif

; Windows' version resource wants four numbers: 0.1.0 becomes 0.1.0.0.
!searchparse /noerrors "${VERSION}" "" VERSION_MAJOR "." VERSION_MINOR "." VERSION_PATCH
!ifndef VERSION_PATCH
  !error "VERSION (${VERSION}) must be three numbers, as in 0.1.0"
!endif

!define APP_NAME "Hearth"
!define PUBLISHER "The Hearth developers"
; HKCU, not HKLM: per-user programs are listed under the user's own hive in Settings > Apps.
!define UNINST_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\Hearth"

Name "${APP_NAME}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\Hearth"
; An update goes where the last install went, if the user chose another folder then.
InstallDirRegKey HKCU "${UNINST_KEY}" "InstallLocation"

; The footer names the product, not the NSIS build that made the installer.
BrandingText "${APP_NAME} ${VERSION}"

VIProductVersion "${VERSION_MAJOR}.${VERSION_MINOR}.${VERSION_PATCH}.0"
VIAddVersionKey "ProductName" "${APP_NAME}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "CompanyName" "${PUBLISHER}"
VIAddVersionKey "FileDescription" "${APP_NAME} ${VERSION} Setup"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "LegalCopyright" "MIT License, ${PUBLISHER}"

!include "MUI2.nsh"
!include "LogicLib.nsh"
!include "FileFunc.nsh"
!include "x64.nsh"
!include "WinVer.nsh"

; ---------------------------------------------------------------------------------------------
; Pages

!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_ABORTWARNING
; One optional box (the desktop shortcut) explains itself.
!define MUI_COMPONENTSPAGE_NODESC

; MUI's default text speaks of system files and reboots, which a per-user install never touches.
!define MUI_WELCOMEPAGE_TEXT "Setup will install Hearth ${VERSION} for your user account only: it \
needs no administrator rights.$\r$\n$\r$\nIf Hearth is running, quit it before you continue.\
$\r$\n$\r$\nClick Next to continue."
!insertmacro MUI_PAGE_WELCOME
!define MUI_PAGE_CUSTOMFUNCTION_LEAVE DirectoryPageLeave
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_INSTFILES
!define MUI_FINISHPAGE_RUN "$INSTDIR\hearth.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Start Hearth"
!insertmacro MUI_PAGE_FINISH

; Said before anything is removed, so nobody uninstalls to free disk space and is surprised that
; the gigabytes of models are still there (or fears that they are gone).
; (The label has room for about four lines.)
!define MUI_UNCONFIRMPAGE_TEXT_TOP "Hearth will be removed from the folder below. Your models, \
conversations and settings are kept, in $LOCALAPPDATA\Hearth and in any models folder you chose: \
delete them yourself if you no longer want them."
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES

!insertmacro MUI_LANGUAGE "English"

; ---------------------------------------------------------------------------------------------
; Helpers

; Sets $R1 to FILE when a running program holds it (and leaves $R1 alone otherwise).
; Windows opens a running program's .exe without write sharing, so opening it for writing fails
; exactly while that copy runs: this finds Hearth started from this folder (not another copy
; elsewhere) with no process list and no plug-in.
!macro _HEARTH_IF_LOCKED FILE
  ${If} ${FileExists} "${FILE}"
    ClearErrors
    FileOpen $R0 "${FILE}" a
    ${If} ${Errors}
      StrCpy $R1 "${FILE}"
    ${Else}
      FileClose $R0
    ${EndIf}
  ${EndIf}
!macroend

; Waits until neither Hearth nor its runner runs from $INSTDIR: files in use cannot be replaced
; or deleted, and a half-replaced bundle does not start. Quits when the user gives up (and in a
; silent run, which has nobody to ask).
!macro HEARTH_WAIT_NOT_RUNNING_FUNCTION PREFIX
  Function ${PREFIX}WaitNotRunning
    ${Do}
      StrCpy $R1 ""
      !insertmacro _HEARTH_IF_LOCKED "$INSTDIR\hearth.exe"
      !insertmacro _HEARTH_IF_LOCKED "$INSTDIR\hearth-runner.exe"
      !insertmacro _HEARTH_IF_LOCKED "$INSTDIR\hearth-server.exe"
      ${If} $R1 == ""
        Return
      ${EndIf}
      MessageBox MB_RETRYCANCEL|MB_ICONEXCLAMATION "Hearth is running ($R1 is in use).$\r$\n$\r$\n\
Quit Hearth, wait a moment for its runner to stop, then click Retry." /SD IDCANCEL IDRETRY retry
      Quit
      retry:
    ${Loop}
  FunctionEnd
!macroend
!insertmacro HEARTH_WAIT_NOT_RUNNING_FUNCTION ""
!insertmacro HEARTH_WAIT_NOT_RUNNING_FUNCTION "un."

; Sets $R1 to why $INSTDIR must not be used, or "" when it may. The uninstaller deletes the whole
; install folder, so that folder must be Hearth's alone: new or empty, or an earlier Hearth
; install being updated. This keeps a mistyped choice such as "Documents" or %LOCALAPPDATA%\Hearth
; (the user's data) from being wiped by a later uninstall.
Function InstallFolderProblem
  StrCpy $R1 ""
  ${DirState} "$INSTDIR" $R2  ; -1 missing, 0 empty, 1 has files
  ${If} $R2 == 1
    ${IfNot} ${FileExists} "$INSTDIR\hearth.exe"
    ${OrIfNot} ${FileExists} "$INSTDIR\Uninstall.exe"
      StrCpy $R1 "$INSTDIR already holds other files. Choose a new or empty folder for Hearth: \
uninstalling Hearth later deletes its whole folder."
    ${EndIf}
  ${EndIf}
FunctionEnd

; ---------------------------------------------------------------------------------------------
; Installer

Function .onInit
  SetShellVarContext current  ; shortcuts in this user's Start menu and desktop, not All Users'
  ; The bundle is 64-bit Python and Qt 6, which needs Windows 10 or later.
  ${IfNot} ${RunningX64}
  ${OrIfNot} ${AtLeastWin10}
    MessageBox MB_OK|MB_ICONSTOP "Hearth needs 64-bit Windows 10 or later." /SD IDOK
    Quit
  ${EndIf}
FunctionEnd

Function DirectoryPageLeave
  Call InstallFolderProblem
  ${If} $R1 != ""
    MessageBox MB_OK|MB_ICONEXCLAMATION "$R1"
    Abort  ; stay on the page to choose another folder
  ${EndIf}
FunctionEnd

Section "Hearth" SecApp
  SectionIn RO
  ; Checked again here: a silent install (/S /D=...) skips the pages, and Hearth may have been
  ; started since the directory page.
  Call InstallFolderProblem
  ${If} $R1 != ""
    MessageBox MB_OK|MB_ICONSTOP "$R1" /SD IDOK
    Quit
  ${EndIf}
  Call WaitNotRunning

  SetOutPath "$INSTDIR"
  ; An update replaces the bundle instead of merging into it: a library or a runtime that the
  ; new version dropped would otherwise stay behind, and a runtime left from an older version
  ; would be offered to the runner although it no longer matches its llama.cpp bindings.
  RMDir /r "$INSTDIR\_internal"
  RMDir /r "$INSTDIR\runtimes"
  File /r "${PAYLOAD}\*"
  ; The icon as a file of its own: shortcuts and Settings > Apps show it even where the .exe's
  ; embedded icon is missing or stale in the icon cache.
  File "/oname=hearth.ico" "${ICON}"
  WriteUninstaller "$INSTDIR\Uninstall.exe"

  CreateShortcut "$SMPROGRAMS\Hearth.lnk" "$INSTDIR\hearth.exe" "" "$INSTDIR\hearth.ico" 0

  WriteRegStr HKCU "${UNINST_KEY}" "DisplayName" "${APP_NAME}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINST_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayIcon" "$INSTDIR\hearth.ico"
  WriteRegStr HKCU "${UNINST_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINST_KEY}" "UninstallString" '"$INSTDIR\Uninstall.exe"'
  WriteRegStr HKCU "${UNINST_KEY}" "QuietUninstallString" '"$INSTDIR\Uninstall.exe" /S'
  ; Nothing to modify or repair: Settings > Apps shows only "Uninstall".
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoRepair" 1
  ; Measured after copying (in KiB, as Windows expects), so it follows the runtimes that went in.
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  IntFmt $0 "0x%08X" $0
  WriteRegDWORD HKCU "${UNINST_KEY}" "EstimatedSize" "$0"
SectionEnd

Section /o "Desktop shortcut" SecDesktop
  CreateShortcut "$DESKTOP\Hearth.lnk" "$INSTDIR\hearth.exe" "" "$INSTDIR\hearth.ico" 0
SectionEnd

; ---------------------------------------------------------------------------------------------
; Uninstaller: the program, its shortcuts and its registry key. Never %LOCALAPPDATA%\Hearth (the
; user's models, conversations and settings), as the confirmation page says.

Function un.onInit
  SetShellVarContext current
  Call un.WaitNotRunning
FunctionEnd

Section "Uninstall"
  Delete "$SMPROGRAMS\Hearth.lnk"
  Delete "$DESKTOP\Hearth.lnk"
  ; The whole folder is Hearth's (InstallFolderProblem refused any other), and the uninstaller
  ; runs from a temporary copy, so Uninstall.exe itself goes too.
  RMDir /r "$INSTDIR"
  DeleteRegKey HKCU "${UNINST_KEY}"
SectionEnd
