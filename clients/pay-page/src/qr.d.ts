// The page imports the QR code library as ./qr.js: the server serves npm `qr`'s module under that name
// (package.json `vendoredAssets`, server/src/http/pay-page.ts). Its types are the package's.
export { encodeQR } from "qr";
