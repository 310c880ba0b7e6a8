/** Operation types of `POST /fees`. */
export const OPERATION_TYPES = ['CARD_ISSUING_FEE', 'CARD_DELIVERY_FEE'] as const;
/** Customer types of spec 4.4.1. */
export const CUSTOMER_TYPES = ['Consumer Debit', 'Business Debit', 'Consumer Prepaid', 'Business Prepaid'] as const;
/** Product types of spec 4.4.1. */
export const PRODUCT_TYPES = ['R001', 'R002', 'R003', 'R004', 'R005', 'R006'] as const;

export type OperationType = (typeof OPERATION_TYPES)[number];
export type CustomerType = (typeof CUSTOMER_TYPES)[number];
export type ProductType = (typeof PRODUCT_TYPES)[number];

/** Currency of every fee of the sandbox fee table. */
export const FEE_CURRENCY = 'EUR';

type FeeRow = Readonly<Record<CustomerType, number>>;
const row = (consumerDebit: number, businessDebit: number, consumerPrepaid: number, businessPrepaid: number): FeeRow => ({
  'Consumer Debit': consumerDebit,
  'Business Debit': businessDebit,
  'Consumer Prepaid': consumerPrepaid,
  'Business Prepaid': businessPrepaid,
});

/** The fee table (EUR), mirrored in docs/upstreams.md. R001 and R004 are virtual-only: no delivery. */
export const FEE_TABLE: Readonly<Record<OperationType, Readonly<Record<ProductType, FeeRow>>>> = {
  CARD_ISSUING_FEE: {
    R001: row(0, 2, 1, 3),
    R002: row(5, 8, 6, 9),
    R003: row(15, 20, 16, 22),
    R004: row(2.5, 4, 3, 5),
    R005: row(49, 59, 55, 65),
    R006: row(9.9, 12, 10.9, 13),
  },
  CARD_DELIVERY_FEE: {
    R001: row(0, 0, 0, 0),
    R002: row(3.5, 4.5, 3.5, 4.5),
    R003: row(7.5, 9, 7.5, 9),
    R004: row(0, 0, 0, 0),
    R005: row(25, 25, 25, 25),
    R006: row(3.5, 4.5, 3.5, 4.5),
  },
};

/** The fee of one operation for a customer and product type, from {@link FEE_TABLE}. */
export function lookupFee(operation: OperationType, customer: CustomerType, product: ProductType): number {
  return FEE_TABLE[operation][product][customer];
}
